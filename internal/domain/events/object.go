package events

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"github.com/revops/revops/internal/platform/apiobject"
	"github.com/revops/revops/internal/platform/redact"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/models"
)

// Object is an event as the API returns it (CONTRACT §9): the answer of GET /v1/events
// and of an event's replay, which keeps it in the replay's transaction (CONTRACT §14).
type Object struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	Type       string `json:"type"`
	Status     string `json:"status"`
	ObjectID   string `json:"object_id"`
	ObjectType string `json:"object_type"`
	// Sequence is the event's number among its object's (CONTRACT §26): null, like the
	// object's other members that have no value, for an event written before the release
	// that added it (its payload has no event.sequence).
	Sequence    *int64          `json:"sequence"`
	Environment string          `json:"environment"`
	CreatedAt   string          `json:"created_at"`
	Payload     json.RawMessage `json:"payload"` // the webhook body, as sent
	Attempts    []AttemptObject `json:"attempts"`
	// Deliveries are the event's deliveries, one per endpoint (CONTRACT §13), each with
	// its own attempts (those of Attempts that belong to it).
	Deliveries []DeliveryObject `json:"deliveries"`
	// FilteredEndpointIDs are the endpoints whose filter left the event out when its
	// deliveries were created (CONTRACT §25); always an array.
	FilteredEndpointIDs []string `json:"filtered_endpoint_ids"`
	WorkflowID          *string  `json:"workflow_id"`
	RunID               *string  `json:"run_id"`
	TemporalUIURL       *string  `json:"temporal_ui_url"`
	TraceID             *string  `json:"trace_id"` // null: tracing was off
}

// DeliveryObject is one delivery of an event, to one endpoint.
type DeliveryObject struct {
	ID         string `json:"id"`
	EndpointID string `json:"endpoint_id"`
	Status     string `json:"status"`
	Sequence   *int64 `json:"sequence"` // the event's (CONTRACT §26); null before the release that added it
	// WaitingFor is the event whose delivery this one waits behind in its lane (CONTRACT
	// §26); null when it is not waiting.
	WaitingFor *string         `json:"waiting_for"`
	Attempts   []AttemptObject `json:"attempts"`
}

// AttemptObject is one attempt of a delivery.
type AttemptObject struct {
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

// Links is where an event's object points outside the API: the service's settings,
// given as data by the caller (the API builds it once from its configuration), so that
// the object can be made inside a transaction without reaching back to the caller.
type Links struct {
	TemporalUI string // the Temporal UI's base URL; "" links nothing
	Namespace  string // the Temporal namespace the runs are in
}

// TemporalRun links to one run's history in the Temporal UI, "" without a run or a UI
// base URL. The API's events and the dashboard's deliveries both use it.
func (l Links) TemporalRun(workflowID, runID string) string {
	if workflowID == "" || runID == "" || l.TemporalUI == "" {
		return ""
	}
	return strings.TrimRight(l.TemporalUI, "/") + "/namespaces/" + url.PathEscape(l.Namespace) +
		"/workflows/" + url.PathEscape(workflowID) + "/" + url.PathEscape(runID) + "/history"
}

// ToObject converts an event read with its attempts and deliveries to the API form.
func ToObject(e Event, l Links) Object {
	o := Object{
		ID: e.ID, Object: "event", Type: e.Type, Status: e.Status, ObjectID: e.ObjectID,
		ObjectType: e.ObjectType, Sequence: e.Sequence, Environment: e.Environment, CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339Nano),
		Payload: json.RawMessage(e.Payload), Attempts: make([]AttemptObject, len(e.Attempts)),
		WorkflowID: apiobject.NonEmpty(e.WorkflowID), RunID: apiobject.NonEmpty(e.RunID),
		TemporalUIURL:       apiobject.NonEmpty(l.TemporalRun(e.WorkflowID, e.RunID)),
		TraceID:             apiobject.NonEmpty(tracing.TraceID(e.TraceParent)),
		Deliveries:          make([]DeliveryObject, len(e.Deliveries)),
		FilteredEndpointIDs: []string(e.FilteredEndpointIDs),
	}
	if o.FilteredEndpointIDs == nil {
		o.FilteredEndpointIDs = []string{}
	}
	for i, a := range e.Attempts {
		o.Attempts[i] = toAttemptObject(a)
	}
	for i, d := range e.Deliveries {
		o.Deliveries[i] = toDeliveryObject(e.Event, d.WebhookDelivery)
		o.Deliveries[i].Attempts = make([]AttemptObject, len(d.Attempts))
		for j, a := range d.Attempts {
			o.Deliveries[i].Attempts[j] = toAttemptObject(a)
		}
	}
	return o
}

// toDeliveryObject is delivery d of event e as the API shows it, without its attempts.
// Its sequence is the event's, which the delivery keeps a copy of (CONTRACT §26).
func toDeliveryObject(e models.Event, d models.WebhookDelivery) DeliveryObject {
	seq := d.Sequence
	if seq == nil {
		seq = e.Sequence
	}
	return DeliveryObject{ID: d.ID, EndpointID: d.EndpointID, Status: d.Status, Sequence: seq,
		WaitingFor: apiobject.NonEmpty(d.WaitingFor), Attempts: []AttemptObject{}}
}

// toAttemptObject is an attempt as the API shows it. Its URL is masked again on the way
// out: attempts recorded by an earlier release hold it in clear until retention ends them.
func toAttemptObject(a models.DeliveryAttempt) AttemptObject {
	o := AttemptObject{
		EndpointID: apiobject.NonEmpty(a.EndpointID), Number: a.Number, Trigger: a.Trigger, RunID: a.RunID, StartedAt: a.StartedAt.UTC().Format(time.RFC3339Nano),
		DurationMS: a.DurationMS, ResponseExcerpt: a.ResponseExcerpt, Error: apiobject.NonEmpty(a.Error),
		Outcome: a.Outcome, URL: redact.URL(a.URL), Method: a.Method, TraceID: apiobject.NonEmpty(a.TraceID),
	}
	if a.StatusCode != 0 {
		code := a.StatusCode
		o.StatusCode = &code
	}
	return o
}
