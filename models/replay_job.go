package models

import "time"

// Replay job statuses.
const (
	ReplayJobRunning = "running"
	ReplayJobDone    = "done"
)

// ReplayJob is one bulk replay (POST /v1/events/replay): the filter it was given, its
// progress, and a cursor so that a job cut by a restart resumes where it stopped.
type ReplayJob struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	EnvironmentID  string
	Status         string
	FilterStatus   string
	FilterType     string
	// FilterEndpointID limits the job to deliveries to one endpoint (CONTRACT §13).
	FilterEndpointID string
	CreatedAfter     *time.Time // inclusive
	CreatedBefore    time.Time  // exclusive; frozen at creation so new events never join
	Matched          int
	Replayed         int
	Failed           int        // deliveries whose replay could not start (delivery in progress…)
	CursorAt         *time.Time // created_at of the last delivery handled (oldest first)
	CursorID         string     // id of that delivery; "" before the first page
	HeartbeatAt      time.Time  // the last page's commit
	// WorkflowStartedAt is when its BulkReplay workflow was started (nil: the API could
	// not reach Temporal yet, and the worker's sweeper will).
	WorkflowStartedAt *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	FinishedAt        *time.Time
}
