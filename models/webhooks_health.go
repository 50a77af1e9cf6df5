package models

import "time"

// Health statuses of an endpoint (CONTRACT §23), derived when read from its
// EndpointHealth row and its Enabled flag.
const (
	HealthHealthy  = "healthy"
	HealthFailing  = "failing"
	HealthDisabled = "disabled"
	HealthIdle     = "idle"
)

// EndpointHealth is an endpoint's health (CONTRACT §23), one row per endpoint, created
// with it and changed by conditional updates only when something changes, so that the
// attempts of a healthy endpoint rarely write it. It outlives its endpoint's deletion
// (the deletion never locks it); the health check removes orphans.
type EndpointHealth struct {
	EndpointID    string `gorm:"primaryKey"`
	EnvironmentID string
	LastAttemptAt *time.Time // kept to within a second
	LastSuccessAt *time.Time // kept to within a second
	// FailingSince is the first failed attempt since the last success (nil: none);
	// re-enabling the endpoint clears it.
	FailingSince *time.Time
	// SpellFailedAt is the spell's first failed attempt of a non-operational delivery:
	// only such a spell is announced (operational deliveries never cause an operational
	// event, CONTRACT §23).
	SpellFailedAt *time.Time
	// TurnedFailing: the spell has lasted REVOPS_WEBHOOK_FAILING_AFTER, judged at a failed
	// attempt's record or by the minute check — the endpoint is "failing" from then, and
	// endpoint-failing was emitted then if the spell had a non-operational failure.
	TurnedFailing bool
	// FailingAnnounced: endpoint-failing was emitted for the spell (once per spell).
	FailingAnnounced bool
	// RecoveryPending: the next success of a non-operational delivery emits
	// endpoint-recovered (set by endpoint-failing and by re-enabling); RecoveryFrom is the
	// failing_since that event reports.
	RecoveryPending bool
	RecoveryFrom    *time.Time
	// The delivery-exhausted minute: until ExhaustedUntil further exhausted deliveries
	// are counted (ExhaustedSuppressed, the latest ExhaustedDeliveryID) and summed into
	// one event when it ends.
	ExhaustedUntil      *time.Time
	ExhaustedSuppressed int
	ExhaustedDeliveryID string
	// SuccessRate24h is not a column: the endpoint reads fill it from the stats rollups
	// (nil: no attempt sent in those hours).
	SuccessRate24h *float64 `gorm:"-"`
}

// TableName is one row per endpoint.
func (EndpointHealth) TableName() string { return "endpoint_health" }
