package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/deals"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/models"
)

// dealEditFields are the members a PATCH of a deal may carry (CONTRACT §7); create also
// takes "submit".
var dealEditFields = fieldRules{
	Writable: []string{"customer", "contract_activates_date",
		"net_price", "net_price_currency", "net_price_precision",
		"original_net_price", "original_net_price_currency", "original_net_price_precision",
		"opportunity_id", "signed_contract_url", "skus", "terms"},
	ReadOnly: []string{"id", "object", "status", "created_at", "updated_at"},
	Nested: map[string]fieldRules{"customer": {
		Writable: []string{"id"},
		ReadOnly: []string{"name", "external_id", "billing_email"},
	}},
}

var dealCreateFields = func() fieldRules {
	r := dealEditFields
	r.Writable = append(append([]string(nil), r.Writable...), "submit")
	return r
}()

func (s *Server) createDeal(c *gin.Context) {
	var in deals.Input
	if err := bindObject(c, dealCreateFields, &in); err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[deals.Object](c, http.StatusCreated)
	d, events, err := deals.Create(c.Request.Context(), s.store, principal(c).Env, in, reply)
	s.renderDeal(c, reply, d, events, err)
}

func (s *Server) updateDeal(c *gin.Context) {
	var in deals.Input
	if err := bindObject(c, dealEditFields, &in); err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[deals.Object](c, http.StatusOK)
	d, events, err := deals.Edit(c.Request.Context(), s.store, principal(c).Env, c.Param("id"), in, reply)
	s.renderDeal(c, reply, d, events, err)
}

func (s *Server) dealAction(action string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := bindNoParams(c); err != nil {
			fail(c, err)
			return
		}
		reply := replyAs[deals.Object](c, http.StatusOK)
		d, events, err := deals.Act(c.Request.Context(), s.store, principal(c).Env, c.Param("id"), action, reply)
		s.renderDeal(c, reply, d, events, err)
	}
}

// renderDeal answers with the deal after a change, in the status chosen once for its
// reply (so the first answer and its replays agree), and counts its committed events
// (the store has handed them to the dispatcher already: store.AfterCommit).
func (s *Server) renderDeal(c *gin.Context, reply idempotency.Reply[deals.Object], d deals.Object, events []models.Event, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	countEmitted(events)
	render(c, reply.Status(), d)
}

func (s *Server) getDeal(c *gin.Context) {
	d, err := deals.Get(c.Request.Context(), s.store, principal(c).Env, c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, d)
}

func (s *Server) listDeals(c *gin.Context) {
	page, err := pageParams(c)
	if err != nil {
		fail(c, err)
		return
	}
	customer, err := idQuery(c, "customer")
	if err != nil {
		fail(c, err)
		return
	}
	f := deals.Filter{Status: c.Query("status"), CustomerID: customer}
	if err := oneOf("status", f.Status, deals.Statuses[1:]...); err != nil {
		fail(c, err)
		return
	}
	out, more, err := deals.List(c.Request.Context(), s.store, principal(c).Env, f, page)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, newList(out, more))
}
