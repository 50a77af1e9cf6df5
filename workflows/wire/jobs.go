package wire

// Inputs and results of the jobs on revops-jobs (CONTRACT §16, §18, §21).

// Bounds of bulk replay (CONTRACT §16).
const (
	// DefaultReplayRate is REVOPS_REPLAY_RATE's default, in deliveries per second.
	DefaultReplayRate = 50
	// MaxReplayPage bounds a page: one short transaction.
	MaxReplayPage = 100
)

// BulkReplayInput is the job to run, its pace (fixed at start, so that a change of
// REVOPS_REPLAY_RATE never changes a running workflow's commands), and where it stands:
// a run that continues as new carries the cursor and counts on.
type BulkReplayInput struct {
	JobID    string
	Rate     float64 // deliveries per second at most
	PageSize int     // deliveries per page
	CursorID string  `json:",omitempty"`
	Replayed int     `json:",omitempty"`
	Failed   int     `json:",omitempty"`
}

// BulkReplayResult is the job's final count, as its row has it.
type BulkReplayResult struct {
	Matched, Replayed, Failed int
}

// ReplayPageSize is the page of a job replaying at rate deliveries per second: about one
// second's worth, so the pace is even, within 1..MaxReplayPage.
func ReplayPageSize(rate float64) int {
	return max(1, min(MaxReplayPage, int(rate)))
}

// MeterBackfillInput is the meter to fill in and, for a run that continued as new, how
// far the runs before it went (counts for the result; the progress itself is the
// meter's row: meters.backfill_seq). EnvironmentID is the fairness key of every page.
type MeterBackfillInput struct {
	MeterID       string
	EnvironmentID string
	Pages         int `json:",omitempty"`
	Rows          int `json:",omitempty"`
}

// MeterBackfillResult is what the backfill counted, over all its runs.
type MeterBackfillResult struct {
	Pages, Rows int
	// Deleted: the meter was deleted before its backfill ended.
	Deleted bool `json:",omitempty"`
}

// MeterPurgeInput is the deleted meter and, for a run that continued as new, how far the
// runs before it went (counts for the result; what is left is in the database).
// EnvironmentID is the fairness key of every page.
type MeterPurgeInput struct {
	MeterID       string
	EnvironmentID string
	Pages         int `json:",omitempty"`
	Rows          int `json:",omitempty"`
}

// MeterPurgeResult is what the purge deleted, over all its runs.
type MeterPurgeResult struct {
	Pages, Rows int
}

// EndpointDeletionInput is the deleted endpoint, its environment (the fairness key of
// every page) and, for a run that continued as new, how far the runs before it went
// (counts for the result; what is left is in the database).
type EndpointDeletionInput struct {
	EndpointID    string
	EnvironmentID string
	Pages         int `json:",omitempty"`
	Rows          int `json:",omitempty"`
}

// EndpointDeletionResult is what the deletion ended, over all its runs.
type EndpointDeletionResult struct {
	Pages, Rows int
}
