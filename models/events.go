package models

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"
)

// Event statuses (CONTRACT §8).
const (
	EventPending   = "pending"
	EventDelivered = "delivered"
	EventRetrying  = "retrying"
	EventFailed    = "failed"
	EventSkipped   = "skipped"
)

// Event is one webhook event: written in the same transaction as the change that caused
// it (the outbox), then delivered by one Temporal workflow.
type Event struct {
	ID             string `gorm:"primaryKey"` // uuid, also the webhook-id header
	OrganizationID string
	EnvironmentID  string
	Environment    string // live or sandbox
	Type           string // deal-created, account-updated…
	ObjectType     string // deal or account
	ObjectID       string
	Time           string // Unix seconds as decimal digits, as sent in event.time
	Payload        string // the exact JSON webhook body
	Status         string
	Seq            int64 // order of events written in one change
	// Sequence is the event's number among its object's events in its environment
	// (CONTRACT §26), taken from the object's sequence row in the change's transaction;
	// nil for events written before the release that added it.
	Sequence     *int64
	DispatchedAt *time.Time // when a workflow was started for it (nil: the sweeper will)
	// RedispatchAt is set by a replay (replay.Deliveries): the event's workflow must
	// be reached again (SignalWithStart); cleared once the dispatcher or sweeper did.
	RedispatchAt *time.Time
	// RedispatchTraceParent is the traceparent of the replay that set RedispatchAt (""
	// when tracing was off): the redispatch continues that trace, linked to TraceParent's.
	RedispatchTraceParent string
	WorkflowID            string
	RunID                 string
	// TraceParent is the W3C traceparent of the change that wrote the event ("" when
	// tracing was off): its workflow start, by whichever process, continues that trace.
	TraceParent string
	// FilteredEndpointIDs are the endpoints subscribed to the event's type whose filter
	// rejected its payload when its deliveries were created (CONTRACT §25): they got no
	// delivery, and a replay of every delivery leaves them out.
	FilteredEndpointIDs IDList
	CreatedAt           time.Time
	UpdatedAt           time.Time
	// Fanout is what the change's transaction wrote for the event, handed to the starter
	// with it so that its start reads nothing back (nil: the event was read from the
	// database). Held in memory only: never stored, rendered, nor sent to Temporal.
	Fanout *Fanout `gorm:"-" json:"-"`
}

// Fanout is an event's deliveries as its change's transaction created them, in the order
// the database lists them (created_at, id), and the destination of each.
type Fanout struct {
	Deliveries   []WebhookDelivery
	Destinations []Destination // Destinations[i] is where Deliveries[i] goes
}

// Destination is what a run's start shows of an endpoint (the endpoint-ids search
// attribute, the Temporal UI summary): no secret and no policy.
type Destination struct {
	EndpointID string
	URL        string
	Method     string
	Enabled    bool
	Pace       float64 // the endpoint's rate per second; 0: unpaced (CONTRACT §27)
}

// DestinationOf is the destination part of an endpoint.
func DestinationOf(ep WebhookEndpoint) Destination {
	return Destination{EndpointID: ep.ID, URL: ep.URL, Method: ep.Method, Enabled: ep.Enabled, Pace: ep.PacedRate()}
}

// Attempt outcomes and triggers.
const (
	AttemptSucceeded = "succeeded"
	AttemptFailed    = "failed"
	AttemptSkipped   = "skipped"

	TriggerScheduled = "scheduled"
	TriggerManual    = "manual"
)

// DeliveryAttempt records one try to deliver an event, timeouts included.
type DeliveryAttempt struct {
	ID              string `gorm:"primaryKey"`
	EventID         string
	EnvironmentID   string
	DeliveryID      string // the delivery it belongs to ("" only while being recorded by old code)
	EndpointID      string // the delivery's endpoint
	RunID           string
	Number          int // 1..6 within a run
	Trigger         string
	URL             string
	Method          string
	StartedAt       time.Time
	DurationMS      int64
	StatusCode      int
	ResponseExcerpt string // ≤ 1 KiB
	Error           string
	Outcome         string
	TraceID         string // the trace the attempt ran in ("" when tracing was off)
	// RetryDelayMS is the wait before the next attempt that the receiver's Retry-After set
	// (Temporal's NextRetryDelay, CONTRACT §23); 0: the retry policy's.
	RetryDelayMS int64
	CreatedAt    time.Time
}

// IDList is a list of ids kept as a JSON array text: nil is stored as [] (the column is
// NOT NULL), and [] reads back as an empty list.
type IDList []string

// Value implements driver.Valuer.
func (l IDList) Value() (driver.Value, error) {
	if l == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]string(l))
	return string(b), err
}

// Scan implements sql.Scanner.
func (l *IDList) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*l = nil
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("id list: cannot scan %T", src)
	}
	var ids []string
	if err := json.Unmarshal(b, &ids); err != nil {
		return fmt.Errorf("id list: %w", err)
	}
	*l = ids
	return nil
}
