package models

import "time"

// UsageBatch is one accepted POST /v1/usage/events request. Its (environment, transaction
// id) is unique: the row is the idempotency record, and Seq, assigned by the database in
// insertion order, is the ingest sequence that orders `set` writes.
type UsageBatch struct {
	Seq           int64 `gorm:"primaryKey"`
	EnvironmentID string
	TransactionID string
	Mode          string // increment or set
	BodyHash      string // canonical hash of the request (usage.Batch.Hash)
	Response      string // the 201 response body, replayed for duplicates
	MetricsCount  int
	ReceivedAt    time.Time
	CreatedAt     time.Time
}

// UsageEvent is one metric of a batch, kept raw for listing and audit.
type UsageEvent struct {
	ID               string `gorm:"primaryKey"` // uuid v7: time-ordered
	EnvironmentID    string
	BatchSeq         int64
	TransactionID    string
	Mode             string
	AccountID        string
	Product          string
	MetricName       string
	MetricValue      string // exact decimal text
	MetricResolution string
	Metadata         string // JSON object
	Timestamp        time.Time
	ReceivedAt       time.Time
	CreatedAt        time.Time
}

// UsageRollup is a metric's total for one period of one resolution, kept at ingest time.
type UsageRollup struct {
	EnvironmentID string
	AccountID     string
	Product       string
	MetricName    string
	Resolution    string
	PeriodStart   time.Time
	Value         string // exact decimal text
	SetSeq        int64  // Seq of the batch whose `set` wrote Value; 0 if none has
	UpdatedAt     time.Time
}
