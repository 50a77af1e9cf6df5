package models

import "time"

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
	Seq            int64      // order of events written in one change
	DispatchedAt   *time.Time // when a workflow was started for it (nil: the sweeper will)
	// RedispatchAt is set by a replay (store.ReplayDeliveries): the event's workflow must
	// be reached again (SignalWithStart); cleared once the dispatcher or sweeper did.
	RedispatchAt *time.Time
	WorkflowID   string
	RunID        string
	CreatedAt    time.Time
	UpdatedAt    time.Time
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
	CreatedAt       time.Time
}
