package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// rollChoices are the expiry choices offered when rolling a key (CLI default: 24h).
var rollChoices = []struct {
	Value string
	Label string
	D     time.Duration
}{
	{"0s", "now", 0},
	{"1h", "in 1 hour", time.Hour},
	{"24h", "in 24 hours", 24 * time.Hour},
	{"72h", "in 3 days", 72 * time.Hour},
	{"168h", "in 7 days", 168 * time.Hour},
}

// keyRow is one API key as the list shows it.
type keyRow struct {
	ID          string
	Type        string
	Environment string
	Masked      string
	Created     *time.Time
	LastUsed    *time.Time
	ExpiresAt   *time.Time
	State       string
}

// keysData is the API Keys page: the list, and a key just made (shown this once).
type keysData struct {
	Keys        []keyRow
	New         *keys.Created
	NewMasked   string
	RollChoices any
	Confirm     *keyRow // the revoke confirmation step
}

func toKeyRow(k models.APIKey, now time.Time) keyRow {
	created := k.CreatedAt
	return keyRow{ID: k.ID, Type: k.Type, Environment: k.Environment, Masked: k.Prefix + "…" + k.Last4,
		Created: &created, LastUsed: k.LastUsedAt, ExpiresAt: k.ExpiresAt, State: keys.State(k, now)}
}

var keyNotices = map[string]string{"revoked": "The key was revoked. Requests with it are refused from now on."}

func (h *handler) listKeys(c *gin.Context) {
	h.showKeys(c, http.StatusOK, nil, keyNotices[c.Query("notice")])
}

// showKeys renders the list of the selected environment's keys, with a new key if any.
func (h *handler) showKeys(c *gin.Context, status int, created *keys.Created, notice string) {
	v := currentViewer(c)
	list, err := h.keys.List(c.Request.Context(), v.OrgID, v.Env)
	if err != nil {
		h.fail(c, err)
		return
	}
	now := h.now()
	d := keysData{RollChoices: rollChoices}
	for _, k := range list {
		d.Keys = append(d.Keys, toKeyRow(k, now))
	}
	if created != nil {
		d.New, d.NewMasked = created, created.Key.Prefix+"…"+created.Key.Last4
	}
	h.render(c, status, "api_keys", view{Title: "API keys", Nav: "api-keys", Notice: notice, Data: d})
}

func (h *handler) createKey(c *gin.Context) {
	typ, ok := h.choice(c, "type", "Choose a public or a secret key.", models.KeyPublic, models.KeySecret)
	if !ok {
		return
	}
	v := currentViewer(c)
	created, err := h.keys.Create(c.Request.Context(), v.OrgID, v.Env, typ)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.showKeys(c, http.StatusCreated, &created, "Key created. Copy it now: it is shown only this once.")
}

func (h *handler) rollKey(c *gin.Context) {
	expiresIn := time.Duration(-1)
	for _, ch := range rollChoices {
		if ch.Value == c.PostForm("expires_in") {
			expiresIn = ch.D
		}
	}
	if expiresIn < 0 {
		h.fail(c, httperr.Request(http.StatusBadRequest, apperr.CodeParameterInvalid, "expires_in", "Choose when the old key stops working."))
		return
	}
	v := currentViewer(c)
	if _, err := h.keyInEnv(c.Request.Context(), v, c.Param("id")); err != nil {
		h.fail(c, err)
		return
	}
	created, err := h.keys.Roll(c.Request.Context(), v.OrgID, c.Param("id"), expiresIn)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.showKeys(c, http.StatusCreated, &created, fmt.Sprintf(
		"Key rolled. The old key stops working %s. Copy the new key now: it is shown only this once.", choiceLabel(expiresIn)))
}

func choiceLabel(d time.Duration) string {
	for _, ch := range rollChoices {
		if ch.D == d {
			return ch.Label
		}
	}
	return "in " + d.String()
}

// keyInEnv loads a key of the viewer's organization and selected environment; any other
// key is "not found", as in the API.
func (h *handler) keyInEnv(ctx context.Context, v *viewer, id string) (models.APIKey, error) {
	k, err := h.keys.Get(ctx, v.OrgID, id)
	if err != nil {
		return k, err
	}
	if k.Environment != v.Env {
		return models.APIKey{}, fmt.Errorf("api key %s in %s: %w", id, v.Env, apperr.ErrNotFound)
	}
	return k, nil
}

func (h *handler) confirmRevoke(c *gin.Context) {
	h.showConfirm(c, http.StatusOK, "")
}

func (h *handler) showConfirm(c *gin.Context, status int, msg string) {
	k, err := h.keyInEnv(c.Request.Context(), currentViewer(c), c.Param("id"))
	if err != nil {
		h.fail(c, err)
		return
	}
	row := toKeyRow(k, h.now())
	h.render(c, status, "revoke_key", view{Title: "Revoke key", Nav: "api-keys", Error: msg, Data: keysData{Confirm: &row}})
}

// revokeKey needs the confirmation box ticked: the no-JavaScript confirmation step.
func (h *handler) revokeKey(c *gin.Context) {
	if c.PostForm("confirm") != "yes" {
		h.showConfirm(c, http.StatusBadRequest, "Tick the box to confirm that this key must stop working now.")
		return
	}
	v := currentViewer(c)
	if _, err := h.keyInEnv(c.Request.Context(), v, c.Param("id")); err != nil {
		h.fail(c, err)
		return
	}
	if _, err := h.keys.Revoke(c.Request.Context(), v.OrgID, c.Param("id")); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/dashboard/api-keys?notice=revoked")
}
