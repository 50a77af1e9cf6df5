package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/textcheck"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

const deliveriesPerPage = 25

var eventStatuses = []string{models.EventPending, models.EventRetrying, models.EventDelivered, models.EventFailed, models.EventSkipped}

// endpointRef names an endpoint in the Deliveries pages.
type endpointRef struct {
	ID, Name string // Name: its description, else its URL's host; "deleted endpoint" once gone
	Deleted  bool
}

// endpointRefs names every endpoint of the environment by id.
func (h *handler) endpointRefs(c *gin.Context, env models.Env) ([]endpointRef, map[string]endpointRef, error) {
	eps, err := webhook.AllEndpoints(c.Request.Context(), h.store, env)
	if err != nil {
		return nil, nil, err
	}
	list, byID := make([]endpointRef, len(eps)), make(map[string]endpointRef, len(eps))
	for i, ep := range eps {
		name := ep.Description
		if name == "" {
			name = ep.URL
			if u, err := url.Parse(ep.URL); err == nil && u.Host != "" {
				name = u.Host
			}
		}
		list[i] = endpointRef{ID: ep.ID, Name: name}
		byID[ep.ID] = list[i]
	}
	return list, byID, nil
}

func refOf(byID map[string]endpointRef, id string) endpointRef {
	if r, ok := byID[id]; ok {
		return r
	}
	return endpointRef{ID: id, Name: "deleted endpoint", Deleted: true}
}

// eventRow is one event as the list shows it.
type eventRow struct {
	ID, Type, ObjectType, ObjectID, Status string
	Created                                *time.Time
	Attempts                               int
	NextRetry                              *time.Time // estimated, while retrying
	Deliveries                             []deliveryRow
	Filtered                               []endpointRef // endpoints whose filter rejected it (CONTRACT §25)
	Sequence                               *int64        // among its object's events (CONTRACT §26); nil before it existed
}

// deliveryRow is one delivery of an event: to which endpoint, and how it stands.
type deliveryRow struct {
	Endpoint    endpointRef
	Status      string
	LastError   string
	Attempts    []models.DeliveryAttempt
	NextAttempt *time.Time // estimated, while retrying
	// WaitingFor is the event whose delivery this one waits behind in its lane, "" when it
	// is not waiting (CONTRACT §26): the page links to it.
	WaitingFor string
}

type deliveriesData struct {
	Events    []eventRow
	Status    string
	Statuses  []string
	Endpoint  string // the endpoint filter's id
	Endpoints []endpointRef
	NextPage  string // link to older events
}

func (h *handler) listDeliveries(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	d := deliveriesData{Status: c.Query("status"), Endpoint: c.Query("endpoint_id"), Statuses: eventStatuses}
	refs, byID, err := h.endpointRefs(c, env)
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Endpoints = refs
	var notFound string
	if _, ok := byID[d.Endpoint]; d.Endpoint != "" && !ok {
		// Well formed (checkInput) but not an endpoint of this environment: deleted,
		// another environment's, or made up. The list stays filtered (a deleted endpoint's
		// deliveries remain) and the selector says so instead of showing "all".
		d.Endpoints = append(d.Endpoints, refOf(byID, d.Endpoint))
		notFound = "No endpoint " + d.Endpoint + " in " + env.Name + " (deleted, or another environment's): only deliveries it left here are listed."
	}
	page := store.Page{Limit: deliveriesPerPage, StartingAfter: c.Query("starting_after")}
	var list []events.Event
	var cursor string // the next page's starting_after
	var more bool
	if d.Endpoint != "" {
		// One endpoint's deliveries, newest first, paged by delivery: an index range each
		// page (store.DeliveriesTo), however rare the endpoint.
		list, cursor, more, err = events.ListTo(c.Request.Context(), h.store, env, d.Endpoint, d.Status, page)
	} else {
		list, more, err = events.List(c.Request.Context(), h.store, env, events.Filter{Status: d.Status}, page)
		if len(list) > 0 {
			cursor = list[len(list)-1].ID
		}
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	for _, e := range list {
		d.Events = append(d.Events, h.toEventRow(e, byID))
	}
	if more {
		d.NextPage = "/dashboard/deliveries?" + url.Values{"status": {d.Status}, "endpoint_id": {d.Endpoint},
			"starting_after": {cursor}}.Encode()
	}
	h.render(c, http.StatusOK, "deliveries", view{Title: "Deliveries", Nav: "deliveries", Notice: replayNotice(c), Error: notFound, Data: d})
}

// toEventRow converts an event read with its deliveries and attempts. While a
// delivery retries, its next attempt is estimated from its last attempt under its
// policy; while the event retries, its next retry from its last attempt under the
// policy of a retrying delivery (the default one without).
func (h *handler) toEventRow(e events.Event, byID map[string]endpointRef) eventRow {
	created := e.CreatedAt
	r := eventRow{ID: e.ID, Type: e.Type, ObjectType: e.ObjectType, ObjectID: e.ObjectID, Status: e.Status,
		Created: &created, Attempts: len(e.Attempts), Sequence: e.Sequence}
	policy, retrying := models.DefaultRetryPolicy, false
	for _, dl := range e.Deliveries {
		row := deliveryRow{Endpoint: refOf(byID, dl.EndpointID), Status: dl.Status, LastError: dl.LastError, Attempts: dl.Attempts,
			WaitingFor: dl.WaitingFor}
		if dl.Status == models.EventRetrying {
			if !retrying {
				policy, retrying = dl.RetryPolicy, true
			}
			if n := len(dl.Attempts); n > 0 {
				last := dl.Attempts[n-1]
				row.NextAttempt = h.nextAttempt(dl.RetryPolicy, last)
			}
		}
		r.Deliveries = append(r.Deliveries, row)
	}
	for _, id := range e.FilteredEndpointIDs {
		r.Filtered = append(r.Filtered, refOf(byID, id))
	}
	if e.Status == models.EventRetrying && len(e.Attempts) > 0 {
		last := e.Attempts[len(e.Attempts)-1]
		r.NextRetry = h.nextAttempt(policy, last)
	}
	return r
}

// nextAttempt estimates when Temporal starts the attempt after `last`: the policy's wait
// after it ends, or the longer wait its receiver's Retry-After set (RetryDelayMS, CONTRACT
// §23). The policy runs as the workflow runs it (retryPolicyOf): the default one at
// REVOPS_WEBHOOK_RETRY_INTERVAL.
func (h *handler) nextAttempt(p models.RetryPolicy, last models.DeliveryAttempt) *time.Time {
	wait := p.Effective(h.cfg.WebhookRetryInterval).Wait(last.Number)
	if last.RetryDelayMS > 0 {
		wait = time.Duration(last.RetryDelayMS) * time.Millisecond
	}
	next := last.StartedAt.Add(time.Duration(last.DurationMS)*time.Millisecond + wait)
	return &next
}

// replayNotice words the notice after a replay. The query is only ever written by our own
// redirects; anything else in it (a crafted link's text) shows no notice (CONTRACT §17).
func replayNotice(c *gin.Context) string {
	n := c.Query("replayed")
	switch {
	case n == "one":
		return "Replay started: every delivery of the event goes again (same event id, so receivers can deduplicate)."
	case n == "endpoint":
		return "Replay started: the delivery to this endpoint goes again (same event id, so receivers can deduplicate)."
	case n != "" && len(n) <= 9 && strings.Trim(n, "0123456789") == "": // a count
		return fmt.Sprintf("Replay started for %s failed deliveries (each endpoint's delivery counts once).", n)
	default:
		return ""
	}
}

type deliveryData struct {
	Event       eventRow
	Payload     string                   // indented JSON
	Other       []models.DeliveryAttempt // attempts recorded before the event had deliveries
	WorkflowID  string
	RunID       string
	TemporalURL string
	TraceID     string // the change's trace ("" when tracing was off)
}

func (h *handler) showDelivery(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	e, err := events.Get(c.Request.Context(), h.store, env, c.Param("id"))
	if err != nil {
		h.fail(c, err)
		return
	}
	_, byID, err := h.endpointRefs(c, env)
	if err != nil {
		h.fail(c, err)
		return
	}
	d := deliveryData{Event: h.toEventRow(e, byID), Payload: indentJSON(e.Payload), Other: e.Unassigned(),
		WorkflowID: e.WorkflowID, RunID: e.RunID, TemporalURL: h.temporalURL(e.Event), TraceID: tracing.TraceID(e.TraceParent)}
	h.render(c, http.StatusOK, "delivery", view{Title: "Event " + e.Type, Nav: "deliveries", Notice: replayNotice(c), Data: d})
}

// temporalURL links to the event's run in the Temporal UI ("" before a run exists).
func (h *handler) temporalURL(e models.Event) string {
	return events.Links{TemporalUI: h.cfg.TemporalUIURL, Namespace: h.cfg.TemporalNamespace}.TemporalRun(e.WorkflowID, e.RunID)
}

func indentJSON(s string) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(s), "", "  "); err != nil {
		return s
	}
	return buf.String()
}

// replayOne replays the event (every delivery), or with endpoint_id its delivery to
// that endpoint only, through the API's replay function (replay.Deliveries, POST
// /v1/events/{id}/replay's decision; a ConflictError delivery_in_progress while a chosen
// delivery is pending or retrying). The button takes no Idempotency-Key: nothing is kept.
func (h *handler) replayOne(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	endpointID := c.PostForm("endpoint_id")
	if endpointID != "" && !textcheck.IsID(endpointID) {
		h.fail(c, fmt.Errorf("endpoint %q: %w", printable(endpointID), apperr.ErrNotFound))
		return
	}
	if _, err := replay.Deliveries(c.Request.Context(), h.store, env, c.Param("id"), endpointID); err != nil {
		h.fail(c, err)
		return
	}
	replayed := "one"
	if endpointID != "" {
		replayed = "endpoint"
	}
	c.Redirect(http.StatusSeeOther, "/dashboard/deliveries/"+url.PathEscape(c.Param("id"))+"?replayed="+replayed)
}

func (h *handler) replayFailed(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	// A job replaying every failed event, as POST /v1/events/replay with that filter
	// makes it; the button keeps no answer.
	j, err := replay.CreateJob(c.Request.Context(), h.store, env, events.Filter{Status: models.EventFailed}, time.Now(), idempotency.Reply[replay.JobObject]{})
	n := j.Matched
	if errors.Is(err, replay.ErrJobLimit) {
		h.fail(c, apperr.ConflictOn(replay.ErrJobLimit, replay.CodeJobLimit, "%d bulk replays are already running in this environment; wait for one to finish, then replay again.", replay.MaxRunningJobs))
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	if n == 0 {
		h.fail(c, apperr.Conflict("nothing_to_replay", "No failed events to replay in this environment."))
		return
	}
	c.Redirect(http.StatusSeeOther, fmt.Sprintf("/dashboard/deliveries?replayed=%d", n))
}
