package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/models"
)

// endpointRow is one endpoint on the Webhooks page.
type endpointRow struct {
	ID, URL, Method, Description string
	Subscriptions                []string // "*" shown as "all event types"
	Enabled                      bool
	DisabledReason               string
	FailingSince                 *time.Time
	Retry                        string // "6 attempts, 1h apart"
	Ordering                     string // none or object (CONTRACT §26)
	Pace                         string // "5/1s", or "unpaced" (CONTRACT §27)
	// Health (CONTRACT §23): healthy, failing, disabled or idle, with the last success and
	// the first failed attempt since (its failing spell).
	Health                   string
	LastSuccess, FailingFrom *time.Time
	Figures                  endpointFigures   // 24 h success rate and p95, the week's attempts by outcome
	Warnings                 []webhook.Warning // what works but should change (credentials in the URL)
}

type webhooksData struct {
	Endpoints   []endpointRow
	Max         int
	CanAdd      bool
	AckSentence string
}

var webhookNotices = map[string]string{
	"deleted": "Endpoint deleted. Its unfinished deliveries were skipped; past deliveries stay in Deliveries.",
	"enabled": "Endpoint enabled: new events are delivered to it again. Replay the deliveries it missed from Deliveries.",
}

func (h *handler) webhookPage(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	eps, err := webhook.AllEndpoints(c.Request.Context(), h.store, env)
	if err != nil {
		h.fail(c, err)
		return
	}
	now := h.now()
	figures, err := h.endpointFiguresOf(c.Request.Context(), env, eps, now)
	if err != nil {
		h.fail(c, err)
		return
	}
	d := webhooksData{Max: webhook.MaxEndpoints, CanAdd: len(eps) < webhook.MaxEndpoints, AckSentence: h.cfg.AckSentence()}
	for _, ep := range eps {
		r := toEndpointRow(ep, now)
		r.Figures = figures[ep.ID]
		d.Endpoints = append(d.Endpoints, r)
	}
	h.render(c, http.StatusOK, "webhooks", view{Title: "Webhooks", Nav: "webhooks", Notice: webhookNotices[c.Query("notice")], Data: d})
}

func toEndpointRow(ep models.WebhookEndpoint, now time.Time) endpointRow {
	r := endpointRow{ID: ep.ID, URL: ep.URL, Method: ep.Method, Description: ep.Description,
		Subscriptions: ep.EventTypes, Enabled: ep.Enabled, DisabledReason: ep.DisabledReason,
		FailingSince: ep.FailingSince, Retry: retryText(ep.RetryPolicy), Pace: webhook.PaceText(ep), Health: webhook.ToHealthObject(ep, now).Status,
		Warnings: webhook.Warnings(ep), Ordering: webhook.OrderingOf(ep)}
	if ep.Health != nil {
		r.LastSuccess, r.FailingFrom = ep.Health.LastSuccessAt, ep.Health.FailingSince
	}
	return r
}

// retryText describes a retry policy in a few words.
func retryText(r models.RetryPolicy) string {
	s := strconv.Itoa(r.MaximumAttempts) + " attempts"
	if r.MaximumAttempts == 1 {
		return "1 attempt, no retry"
	}
	if r.BackoffCoefficient == 1 || r.InitialIntervalMS == r.MaximumIntervalMS {
		return s + ", " + webhook.FormatDuration(r.InitialInterval()) + " apart"
	}
	return s + ", " + webhook.FormatDuration(r.InitialInterval()) + " × " +
		strconv.FormatFloat(r.BackoffCoefficient, 'f', -1, 64) + " up to " + webhook.FormatDuration(r.MaximumInterval())
}

// enableEndpoint re-enables a disabled endpoint (the banner's button): PATCH {"enabled":true}.
func (h *handler) enableEndpoint(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	on := true
	if _, err := h.endpoints.Update(c.Request.Context(), env, c.Param("id"), webhook.EndpointFields{Enabled: &on}, idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/dashboard/webhooks?notice=enabled")
}

// subscriptionChoices are the event-type checkboxes of the form: "*" first, then the
// catalog (seed types, then the operational ones, which "*" does not include).
type subscriptionChoice struct {
	Name, Description string
	Operational       bool
}

func subscriptionChoices() []subscriptionChoice {
	out := []subscriptionChoice{{Name: catalog.Wildcard, Description: "Every event type of the seed, including types added later (not endpoint-disabled)."}}
	for _, t := range catalog.All() {
		out = append(out, subscriptionChoice{Name: t.Name, Description: t.Description, Operational: catalog.Operational(t.Name)})
	}
	return out
}

func endpointPath(id string) string { return "/dashboard/webhooks/" + url.PathEscape(id) }
