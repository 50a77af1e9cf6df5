package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/store"
)

func (h *handler) revealSecret(c *gin.Context) {
	d, ep, err := h.endpointView(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	// An ed25519 endpoint has no secret to reveal (CONTRACT §25): its page shows the
	// public key already.
	if secret, err := webhook.ReadSecret(ep); err == nil {
		d.Secret = secret.Secret
	}
	h.showEndpoint(c, http.StatusOK, d, "", "")
}

func (h *handler) rotateSecret(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	ep, err := webhook.RotateKey(c.Request.Context(), h.store, env, c.Param("id"), time.Now().UTC(), webhook.RotationOverlap, idempotency.Reply[webhook.SecretObject]{})
	if err != nil {
		h.fail(c, err)
		return
	}
	d := h.endpointPage(ep) // the rotated endpoint as saved: no need to load it again
	// None for ed25519: the page shows its public key.
	d.Secret = webhook.ToSecretObject(ep).Secret
	what := "signing secret"
	if d.PublicKey != "" {
		what = "key pair"
	}
	h.showEndpoint(c, http.StatusOK, d, fmt.Sprintf(
		"New %s made. The previous one still signs until %s.", what, ep.PreviousUntil.UTC().Format("2006-01-02 15:04 UTC")), "")
}

// testEndpoint sends the §8 test body of the chosen type to this endpoint now.
func (h *handler) testEndpoint(c *gin.Context) {
	d, _, err := h.endpointView(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	d.TestType = printable(c.PostForm("type"))
	res, err := h.endpoints.Test(c.Request.Context(), env, d.ID, c.PostForm("type"))
	if fieldErrors(err) != nil {
		h.showEndpoint(c, http.StatusBadRequest, d, "", "Choose an event type from the list.")
		return
	}
	if errors.Is(err, store.ErrTestInProgress) {
		h.showEndpoint(c, http.StatusConflict, d, "", "A test is already being sent to this endpoint (from here or through the API); wait for its answer, then send another.")
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Test = &res
	h.showEndpoint(c, http.StatusOK, d, "", "")
}

// confirmDeleteEndpoint is the no-JavaScript confirmation step before a delete.
func (h *handler) confirmDeleteEndpoint(c *gin.Context) {
	h.showDeleteEndpoint(c, http.StatusOK, "")
}

func (h *handler) showDeleteEndpoint(c *gin.Context, status int, msg string) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	ep, err := webhook.GetEndpoint(c.Request.Context(), h.store, env, c.Param("id"))
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, status, "endpoint_delete", view{Title: "Delete endpoint", Nav: "webhooks", Error: msg, Data: toEndpointRow(ep, h.now())})
}

// deleteEndpoint needs the confirmation box ticked.
func (h *handler) deleteEndpoint(c *gin.Context) {
	if c.PostForm("confirm") != "yes" {
		h.showDeleteEndpoint(c, http.StatusBadRequest, "Tick the box to confirm that this endpoint must be deleted.")
		return
	}
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if _, err := webhook.DeleteEndpoint(c.Request.Context(), h.store, env, c.Param("id"), idempotency.Reply[webhook.DeletedEndpoint]{}); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/dashboard/webhooks?notice=deleted")
}
