package models

import "time"

// Reasons an endpoint is disabled (CONTRACT §13).
const (
	DisabledManual  = "manual"  // PATCH {"enabled":false}, PUT or the dashboard
	DisabledFailing = "failing" // automatically, after REVOPS_WEBHOOK_DISABLE_AFTER of failures
)

// RetryPolicy is the schedule of one delivery's attempts, mirroring Temporal's
// RetryPolicy (CONTRACT §13). Stored as milliseconds in retry_* columns.
type RetryPolicy struct {
	InitialIntervalMS  int64   `gorm:"column:retry_initial_interval_ms"`
	BackoffCoefficient float64 `gorm:"column:retry_backoff_coefficient"`
	MaximumIntervalMS  int64   `gorm:"column:retry_maximum_interval_ms"`
	MaximumAttempts    int     `gorm:"column:retry_maximum_attempts"`
}

// DefaultRetryPolicy is the seed's schedule: 6 attempts (1 + 5 retries), 1 hour apart.
var DefaultRetryPolicy = RetryPolicy{
	InitialIntervalMS: time.Hour.Milliseconds(), BackoffCoefficient: 1.0,
	MaximumIntervalMS: time.Hour.Milliseconds(), MaximumAttempts: 6,
}

// InitialInterval is the policy's first interval as a duration.
func (p RetryPolicy) InitialInterval() time.Duration {
	return time.Duration(p.InitialIntervalMS) * time.Millisecond
}

// MaximumInterval is the policy's longest interval as a duration.
func (p RetryPolicy) MaximumInterval() time.Duration {
	return time.Duration(p.MaximumIntervalMS) * time.Millisecond
}

// WebhookEndpoint is one of an environment's webhook destinations (up to 16).
type WebhookEndpoint struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	EnvironmentID  string
	URL            string
	Method         string // POST or GET
	Description    string
	EventTypes     []string `gorm:"serializer:json"` // ["*"] or known types (internal/catalog)
	RetryPolicy    `gorm:"embedded"`
	Enabled        bool
	DisabledReason string     // "" when enabled, else DisabledManual or DisabledFailing
	FailingSince   *time.Time // set when disabled for failing: the first failed attempt since the last success
	EnabledAt      *time.Time // last (re-)enabled: failures before it do not count towards disabling
	Secret         string     // whsec_…; never logged, never in workflow history
	PreviousSecret string     // still signs until PreviousUntil (rotation overlap)
	PreviousUntil  *time.Time //
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// WebhookDelivery is one (event, endpoint) pair: the event is sent to that endpoint under
// the retry policy copied from the endpoint when the delivery was created.
type WebhookDelivery struct {
	ID            string `gorm:"primaryKey"`
	EventID       string
	EnvironmentID string
	EndpointID    string
	Status        string // EventPending, EventRetrying, EventDelivered, EventFailed, EventSkipped
	RetryPolicy   `gorm:"embedded"`
	LastError     string // endpoint_deleted, endpoint_disabled, or the last failed attempt's reason
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Reasons a delivery ended without an attempt's own result.
const (
	DeliveryEndpointDeleted  = "endpoint_deleted"
	DeliveryEndpointDisabled = "endpoint_disabled"
)
