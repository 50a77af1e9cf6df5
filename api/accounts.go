package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/domain/accounts"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// accountFields are the members an account request may carry (CONTRACT §6).
var accountFields = fieldRules{
	Writable: []string{"name", "external_id", "domain", "billing_email", "properties"},
	ReadOnly: []string{"id", "object", "status", "created_at", "updated_at"},
}

func (s *Server) createAccount(c *gin.Context) {
	var in accounts.Input
	if err := bindObject(c, accountFields, &in); err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[accounts.Object](c, http.StatusCreated)
	a, events, err := accounts.Create(c.Request.Context(), s.store, principal(c).Env, in, reply)
	s.renderAccount(c, reply, a, events, err)
}

func (s *Server) updateAccount(c *gin.Context) {
	var in accounts.Input
	if err := bindObject(c, accountFields, &in); err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[accounts.Object](c, http.StatusOK)
	a, events, err := accounts.Update(c.Request.Context(), s.store, principal(c).Env, c.Param("id"), in, reply)
	s.renderAccount(c, reply, a, events, err)
}

// accountAction serves activate and DELETE (deprovision): no parameters.
func (s *Server) accountAction(act func(ctx context.Context, st accounts.Store, env models.Env, id string, reply idempotency.Reply[accounts.Object]) (accounts.Object, []models.Event, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := bindNoParams(c); err != nil {
			fail(c, err)
			return
		}
		reply := replyAs[accounts.Object](c, http.StatusOK)
		a, events, err := act(c.Request.Context(), s.store, principal(c).Env, c.Param("id"), reply)
		s.renderAccount(c, reply, a, events, err)
	}
}

// renderAccount answers with the account after a change, in the status chosen once for
// its reply (so the first answer and its replays agree), and counts its committed
// events (the store has handed them to the dispatcher already: store.AfterCommit).
func (s *Server) renderAccount(c *gin.Context, reply idempotency.Reply[accounts.Object], a accounts.Object, events []models.Event, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	countEmitted(events)
	render(c, reply.Status(), a)
}

func (s *Server) getAccount(c *gin.Context) {
	a, err := accounts.Get(c.Request.Context(), s.store, principal(c).Env, c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, a)
}

func (s *Server) listAccounts(c *gin.Context) {
	page, err := pageParams(c)
	if err != nil {
		fail(c, err)
		return
	}
	f := accounts.Filter{Status: c.Query("status"), ExternalID: c.Query("external_id")}
	if err := oneOf("status", f.Status, models.AccountDraft, models.AccountActive, models.AccountDeprovisioned); err != nil {
		fail(c, err)
		return
	}
	out, more, err := accounts.List(c.Request.Context(), s.store, principal(c).Env, f, page)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, newList(out, more))
}

// oneOf checks an optional query filter against its allowed values.
func oneOf(param, v string, allowed ...string) error {
	if v == "" {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return httperr.Request(http.StatusBadRequest, apperr.CodeParameterInvalid, param, "%s %q is not one of %v.", param, v, allowed)
}
