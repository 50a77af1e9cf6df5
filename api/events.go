package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/models"
)

// eventStatuses are the delivery statuses of CONTRACT §8.
var eventStatuses = []string{models.EventPending, models.EventRetrying, models.EventDelivered, models.EventFailed, models.EventSkipped}

type eventObject struct {
	ID          string          `json:"id"`
	Object      string          `json:"object"`
	Type        string          `json:"type"`
	Status      string          `json:"status"`
	ObjectID    string          `json:"object_id"`
	ObjectType  string          `json:"object_type"`
	Environment string          `json:"environment"`
	CreatedAt   string          `json:"created_at"`
	Payload     json.RawMessage `json:"payload"` // the webhook body, as sent
	Attempts    []attemptObject `json:"attempts"`
	// Deliveries are the event's deliveries, one per endpoint (CONTRACT §13), each with
	// its own attempts (those of Attempts that belong to it).
	Deliveries    []deliveryObject `json:"deliveries"`
	WorkflowID    *string          `json:"workflow_id"`
	RunID         *string          `json:"run_id"`
	TemporalUIURL *string          `json:"temporal_ui_url"`
	TraceID       *string          `json:"trace_id"` // null: tracing was off
}

type deliveryObject struct {
	ID         string          `json:"id"`
	EndpointID string          `json:"endpoint_id"`
	Status     string          `json:"status"`
	Attempts   []attemptObject `json:"attempts"`
}

type attemptObject struct {
	EndpointID      *string `json:"endpoint_id"` // null: recorded before the event had deliveries
	Number          int     `json:"number"`
	Trigger         string  `json:"trigger"`
	RunID           string  `json:"run_id"`
	StartedAt       string  `json:"started_at"`
	DurationMS      int64   `json:"duration_ms"`
	StatusCode      *int    `json:"status_code"`
	ResponseExcerpt string  `json:"response_excerpt"`
	Error           *string `json:"error"`
	Outcome         string  `json:"outcome"`
	URL             string  `json:"url,omitempty"`
	Method          string  `json:"method,omitempty"`
	TraceID         *string `json:"trace_id"` // null: tracing was off
}

// toEventObject converts an event read with its attempts and deliveries.
func (s *Server) toEventObject(e events.Event) eventObject {
	o := eventObject{
		ID: e.ID, Object: "event", Type: e.Type, Status: e.Status, ObjectID: e.ObjectID,
		ObjectType: e.ObjectType, Environment: e.Environment, CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339Nano),
		Payload: json.RawMessage(e.Payload), Attempts: make([]attemptObject, len(e.Attempts)),
		WorkflowID: nonEmpty(e.WorkflowID), RunID: nonEmpty(e.RunID),
		TemporalUIURL: nonEmpty(s.cfg.TemporalRunURL(e.WorkflowID, e.RunID)),
		TraceID:       nonEmpty(tracing.TraceID(e.TraceParent)),
		Deliveries:    make([]deliveryObject, len(e.Deliveries)),
	}
	for i, a := range e.Attempts {
		o.Attempts[i] = toAttemptObject(a)
	}
	for i, d := range e.Deliveries {
		o.Deliveries[i] = deliveryObject{ID: d.ID, EndpointID: d.EndpointID, Status: d.Status, Attempts: make([]attemptObject, len(d.Attempts))}
		for j, a := range d.Attempts {
			o.Deliveries[i].Attempts[j] = toAttemptObject(a)
		}
	}
	return o
}

func toAttemptObject(a models.DeliveryAttempt) attemptObject {
	o := attemptObject{
		EndpointID: nonEmpty(a.EndpointID), Number: a.Number, Trigger: a.Trigger, RunID: a.RunID, StartedAt: a.StartedAt.UTC().Format(time.RFC3339Nano),
		DurationMS: a.DurationMS, ResponseExcerpt: a.ResponseExcerpt, Error: nonEmpty(a.Error),
		Outcome: a.Outcome, URL: a.URL, Method: a.Method, TraceID: nonEmpty(a.TraceID),
	}
	if a.StatusCode != 0 {
		code := a.StatusCode
		o.StatusCode = &code
	}
	return o
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// eventFilter reads and checks the list filters of GET /v1/events.
func eventFilter(c *gin.Context) (events.Filter, error) {
	objectID, err := idQuery(c, "object_id")
	if err != nil {
		return events.Filter{}, err
	}
	endpointID, err := idQuery(c, "endpoint_id")
	if err != nil {
		return events.Filter{}, err
	}
	// With endpoint_id, status is that endpoint's delivery's (CONTRACT §13).
	f := events.Filter{Type: c.Query("type"), Status: c.Query("status"), ObjectID: objectID, EndpointID: endpointID}
	var fs apperr.Faults
	checkEventFilter(&fs, f.Type, f.Status)
	f.CreatedAfter, f.CreatedBefore = timeQuery(c, "created_after", false, true, &fs), timeQuery(c, "created_before", false, true, &fs)
	checkRange(&fs, f.CreatedAfter, f.CreatedBefore)
	return f, fs.Err()
}

func checkEventFilter(fs *apperr.Faults, typ, status string) {
	if typ != "" && !catalog.Known(typ) {
		fs.Invalid("type", "type must be one of %v.", catalog.Names())
	}
	if status != "" && !slices.Contains(eventStatuses, status) {
		fs.Invalid("status", "status must be one of %v.", eventStatuses)
	}
}

func checkRange(fs *apperr.Faults, after, before *time.Time) {
	if after != nil && before != nil && !after.Before(*before) {
		fs.Invalid("created_before", "created_before must be later than created_after.")
	}
}

func (s *Server) listEvents(c *gin.Context) {
	page, err := pageParams(c)
	if err != nil {
		fail(c, err)
		return
	}
	f, err := eventFilter(c)
	if err != nil {
		fail(c, err)
		return
	}
	list, more, err := events.List(c.Request.Context(), s.store, principal(c).Env, f, page)
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]eventObject, len(list))
	for i, e := range list {
		out[i] = s.toEventObject(e)
	}
	render(c, http.StatusOK, newList(out, more))
}

func (s *Server) getEvent(c *gin.Context) {
	e, err := events.Get(c.Request.Context(), s.store, principal(c).Env, c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, s.toEventObject(e))
}
