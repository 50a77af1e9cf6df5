package models

import "time"

// Reasons an endpoint is disabled (CONTRACT §13).
const (
	DisabledManual  = "manual"  // PATCH {"enabled":false}, PUT or the dashboard
	DisabledFailing = "failing" // automatically, after REVOPS_WEBHOOK_DISABLE_AFTER of failures
	DisabledGone    = "gone"    // automatically, when the receiver answered 410 Gone (CONTRACT §23)
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

// Effective is the policy a delivery runs under: p itself, but the default policy for
// a row without one (never expected, never unbounded), and the default policy at
// defaultInterval when one is given (REVOPS_WEBHOOK_RETRY_INTERVAL, which demos and
// tests shorten). The workflow hands it to Temporal; the dashboard estimates with it.
func (p RetryPolicy) Effective(defaultInterval time.Duration) RetryPolicy {
	if p.MaximumAttempts <= 0 {
		p = DefaultRetryPolicy
	}
	if p == DefaultRetryPolicy && defaultInterval > 0 {
		p.InitialIntervalMS, p.MaximumIntervalMS = defaultInterval.Milliseconds(), defaultInterval.Milliseconds()
	}
	return p
}

// Wait is how long Temporal waits after attempt n (from 1) fails before the next:
// the initial interval times the coefficient n-1 times, capped at the maximum interval.
func (p RetryPolicy) Wait(n int) time.Duration { return time.Duration(p.wait(n)) }

// wait is Wait in float64 nanoseconds: 10^19 s still fits, and the cap applies.
func (p RetryPolicy) wait(n int) float64 {
	w, limit := float64(p.InitialInterval()), float64(p.MaximumInterval())
	for i := 1; i < n && w < limit; i++ {
		w *= p.BackoffCoefficient
	}
	return min(w, limit)
}

// Schedule is the time from the first attempt to the last, every attempt failing: the
// sum of the waits between them. Summed unrounded, so that a schedule at the bound of
// CONTRACT §13 is judged on its exact value.
func (p RetryPolicy) Schedule() time.Duration {
	var total float64
	for n := 1; n < p.MaximumAttempts; n++ {
		total += p.wait(n)
	}
	return time.Duration(total)
}

// WebhookEndpoint is one of an environment's webhook destinations (up to 16).
type WebhookEndpoint struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	EnvironmentID  string
	URL            string
	Method         string // POST or GET
	Description    string
	EventTypes     []string `gorm:"serializer:json"` // ["*"] or known types (internal/platform/catalog)
	RetryPolicy    `gorm:"embedded"`
	// RateLimit attempts per RatePeriod ("1s" or "1m") is the endpoint's pace (CONTRACT
	// §27); 0 and "" when it is unpaced.
	RateLimit      int
	RatePeriod     string
	Enabled        bool
	DisabledReason string     // "" when enabled, else DisabledManual, DisabledFailing or DisabledGone
	FailingSince   *time.Time // set when disabled for failing: the first failed attempt since the last success
	EnabledAt      *time.Time // last (re-)enabled: failures before it do not count towards disabling
	// Secret is whsec_… or whsk_…: never logged, never in workflow history, sealed in
	// the database (CONTRACT §25, internal/store/sealed.go).
	Secret         string     `gorm:"serializer:sealed"`
	PreviousSecret string     `gorm:"serializer:sealed"` // still signs until PreviousUntil (rotation overlap)
	PreviousUntil  *time.Time //
	// Filter is the endpoint's filter as JSON text ("" = none): a condition on the
	// delivered payload, evaluated when an event's deliveries are created (CONTRACT §25).
	Filter string
	// Headers are the custom headers sent with every request to the endpoint (CONTRACT
	// §25), names as the client gave them. Their values are secrets, like Secret: never
	// logged, never in workflow history, shown only by the write that sets them. nil when
	// none (the column holds ""); read and written only through this model, so that the
	// column's serializer applies: sealed as JSON (internal/store/sealed.go).
	Headers map[string]string `gorm:"serializer:sealed;not null"`
	// Ordering is OrderingNone or OrderingObject (CONTRACT §26): copied onto each delivery
	// when it is created.
	Ordering  string `gorm:"not null;default:none"`
	CreatedAt time.Time
	UpdatedAt time.Time
	// Health is the endpoint's health row as the read that loaded it found it (nil: not
	// loaded, or none yet): not a column (CONTRACT §23).
	Health *EndpointHealth `gorm:"-"`
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
	// Replays counts the replays that put the delivery back to pending: a series of
	// attempts started before the last of them must not end it failed.
	Replays int
	// ObjectID and Sequence are the event's (CONTRACT §26), copied so that a lane (one
	// endpoint, one object) is read from this table alone.
	ObjectID string
	Sequence *int64
	// Ordered is the endpoint's ordering when the delivery was created: only ordered
	// deliveries are in their lane.
	Ordered bool
	// WaitingFor is the id of the event whose delivery this one waits behind in its lane
	// ("" when it is not waiting): a waiting delivery is pending with no run (§26).
	WaitingFor string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Reasons a delivery ended without an attempt's own result.
const (
	DeliveryEndpointDeleted  = "endpoint_deleted"
	DeliveryEndpointDisabled = "endpoint_disabled"
	// DeliveryGone is the error of the attempt answered 410 Gone, and so of its delivery,
	// which ends failed at once and disables its endpoint (CONTRACT §23).
	DeliveryGone             = "gone"
	DeliveryOrderWaitExpired = "order_wait_expired"
	DeliveryRunClosed        = "run_closed"
)

// Endpoint orderings (CONTRACT §26).
const (
	OrderingNone   = "none"
	OrderingObject = "object"
)

// Rate periods of a paced endpoint (CONTRACT §27).
const (
	RatePerSecond = "1s"
	RatePerMinute = "1m"
)

// PacedRate is the endpoint's pace in attempts per second (CONTRACT §27), the weight
// its fairness key gets on the paced task queue; 0 when it is unpaced.
func (ep WebhookEndpoint) PacedRate() float64 {
	switch {
	case ep.RateLimit <= 0:
		return 0
	case ep.RatePeriod == RatePerMinute:
		return float64(ep.RateLimit) / 60
	default:
		return float64(ep.RateLimit)
	}
}
