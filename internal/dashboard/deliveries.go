package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Replayer starts new delivery runs of events (CONTRACT §9). The webhook engine provides
// it; without one the Deliveries page shows no replay buttons.
type Replayer interface {
	// Replay starts a new run of one event (ConflictError delivery_in_progress while one runs).
	Replay(ctx context.Context, env store.Env, eventID string) error
	// ReplayFailed starts a new run of every failed event and says how many it started.
	ReplayFailed(ctx context.Context, env store.Env) (int, error)
}

const deliveriesPerPage = 25

var eventStatuses = []string{models.EventPending, models.EventRetrying, models.EventDelivered, models.EventFailed, models.EventSkipped}

func (h *handler) deliveryRoutes(g *gin.RouterGroup) {
	g.GET("/deliveries", h.listDeliveries)
	g.GET("/deliveries/:id", h.showDelivery)
	if h.replayer != nil {
		g.POST("/deliveries/:id/replay", h.replayOne)
		g.POST("/deliveries/replay-failed", h.replayFailed)
	}
}

// eventRow is one event as the list shows it.
type eventRow struct {
	ID, Type, ObjectType, ObjectID, Status string
	Created                                *time.Time
	Attempts                               int
	NextRetry                              *time.Time // estimated, while retrying
}

type deliveriesData struct {
	Events    []eventRow
	Status    string
	Statuses  []string
	NextPage  string // link to older events
	CanReplay bool
}

func (h *handler) listDeliveries(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	d := deliveriesData{Status: c.Query("status"), Statuses: eventStatuses, CanReplay: h.replayer != nil}
	events, more, err := h.store.DashboardEvents(c.Request.Context(), env, d.Status, store.Page{Limit: deliveriesPerPage, StartingAfter: c.Query("starting_after")})
	if err != nil {
		h.fail(c, err)
		return
	}
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	stats, err := h.store.DashboardAttemptStats(c.Request.Context(), env, ids)
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, e := range events {
		d.Events = append(d.Events, h.toEventRow(e, stats[e.ID]))
	}
	if more {
		d.NextPage = "/dashboard/deliveries?" + url.Values{"status": {d.Status}, "starting_after": {events[len(events)-1].ID}}.Encode()
	}
	h.render(c, http.StatusOK, "deliveries", view{Title: "Deliveries", Nav: "deliveries", Notice: replayNotice(c), Data: d})
}

func (h *handler) toEventRow(e models.Event, st store.AttemptStats) eventRow {
	created := e.CreatedAt
	r := eventRow{ID: e.ID, Type: e.Type, ObjectType: e.ObjectType, ObjectID: e.ObjectID, Status: e.Status,
		Created: &created, Attempts: st.Count}
	if e.Status == models.EventRetrying && st.Count > 0 {
		// Temporal waits the retry interval after the failed attempt ends.
		next := st.LastStarted.Add(time.Duration(st.LastMS)*time.Millisecond + h.cfg.WebhookRetryInterval)
		r.NextRetry = &next
	}
	return r
}

func replayNotice(c *gin.Context) string {
	switch c.Query("replayed") {
	case "":
		return ""
	case "one":
		return "Replay started: a new delivery run of the same event (same id, so receivers can deduplicate)."
	default:
		return fmt.Sprintf("Replay started for %s failed event(s).", c.Query("replayed"))
	}
}

type deliveryData struct {
	Event       eventRow
	Payload     string // indented JSON
	Attempts    []models.DeliveryAttempt
	WorkflowID  string
	RunID       string
	TemporalURL string
	CanReplay   bool
}

func (h *handler) showDelivery(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	e, err := h.store.DashboardEvent(c.Request.Context(), env, c.Param("id"))
	if err != nil {
		h.fail(c, err)
		return
	}
	attempts, err := h.store.DeliveryAttempts(c.Request.Context(), env, e.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	st := store.AttemptStats{Count: len(attempts)}
	if n := len(attempts); n > 0 {
		st.LastStarted, st.LastMS = attempts[n-1].StartedAt, attempts[n-1].DurationMS
	}
	d := deliveryData{Event: h.toEventRow(e, st), Payload: indentJSON(e.Payload), Attempts: attempts,
		WorkflowID: e.WorkflowID, RunID: e.RunID, TemporalURL: h.temporalURL(e), CanReplay: h.replayer != nil}
	h.render(c, http.StatusOK, "delivery", view{Title: "Event " + e.Type, Nav: "deliveries", Notice: replayNotice(c), Data: d})
}

// temporalURL links to the event's run in the Temporal UI ("" before a run exists).
func (h *handler) temporalURL(e models.Event) string {
	return h.cfg.TemporalRunURL(e.WorkflowID, e.RunID)
}

func indentJSON(s string) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(s), "", "  "); err != nil {
		return s
	}
	return buf.String()
}

func (h *handler) replayOne(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if _, err := h.store.DashboardEvent(c.Request.Context(), env, c.Param("id")); err != nil {
		h.fail(c, err)
		return
	}
	if err := h.replayer.Replay(c.Request.Context(), env, c.Param("id")); err != nil {
		h.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, "/dashboard/deliveries/"+url.PathEscape(c.Param("id"))+"?replayed=one")
}

func (h *handler) replayFailed(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	n, err := h.replayer.ReplayFailed(c.Request.Context(), env)
	if err != nil {
		h.fail(c, err)
		return
	}
	if n == 0 {
		h.fail(c, apperr.Request(http.StatusConflict, "nothing_to_replay", "", "No failed events to replay in this environment."))
		return
	}
	c.Redirect(http.StatusSeeOther, fmt.Sprintf("/dashboard/deliveries?replayed=%d", n))
}
