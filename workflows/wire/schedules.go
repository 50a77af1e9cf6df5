package wire

import "time"

// The runs Temporal Schedules start (CONTRACT §16, §23).
const (
	// RetentionEvery is how often the Schedule runs the retention workflow.
	RetentionEvery = 24 * time.Hour
	// HealthCheckEvery is how often the Schedule runs the endpoint health check.
	HealthCheckEvery = time.Minute
)

// RetentionInput is the Schedule's argument: how long events are kept. A run that
// continues as new carries its cutoffs on, so one purge has one notion of "now".
type RetentionInput struct {
	Retention time.Duration
	Now       time.Time `json:",omitzero"`
	Done      []string  `json:",omitempty"` // targets already emptied
}

// RetentionResult counts the rows this run deleted, by table.
type RetentionResult struct {
	Deleted map[string]int64
}

// HealthCheckInput is the Schedule's argument (none yet: the worker's configuration
// says how long failing takes).
type HealthCheckInput struct{}
