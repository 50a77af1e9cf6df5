package models

import "time"

// Meter statuses (CONTRACT §18).
const (
	MeterBackfilling = "backfilling"
	MeterReady       = "ready"
)

// Meter aggregations (CONTRACT §18).
const (
	AggSum         = "sum"
	AggCount       = "count"
	AggMax         = "max"
	AggMin         = "min"
	AggLatest      = "latest"
	AggUniqueCount = "unique_count"
)

// Meter turns an environment's usage rows into figures kept per window (CONTRACT §18).
//
// BackfillGen splits the rows it counts in two: usage batches the live consumer took at
// generation BackfillGen or before were taken without this meter and are the backfill's;
// every later batch is counted by the consumer. BackfillSeq is the backfill's progress,
// the last batch seq it counted.
type Meter struct {
	ID               string `gorm:"primaryKey"`
	OrganizationID   string
	EnvironmentID    string
	Key              string
	Description      string
	FilterMetricName string
	FilterProduct    string   // "" = any product
	Aggregation      string   // Agg*
	ValueKey         string   // unique_count only
	GroupBy          []string `gorm:"serializer:json"`
	Status           string
	BackfillGen      int64
	BackfillSeq      int64
	// BackfillPartSeq/After: rows of batch BackfillPartSeq up to id BackfillPartAfter were
	// counted before the meter existed, in a batch the consumer applied in parts.
	BackfillPartSeq   int64
	BackfillPartAfter string
	// BackfillAsOf is the receipt time of the oldest batch the backfill has not counted
	// (nil: none left).
	BackfillAsOf      *time.Time
	BackfillStartedAt *time.Time // when its MeterBackfill workflow was started
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// MeterFigure is one meter's kept figure for one window of one kind, account and group.
// Groups is the JSON array of the meter's group_by values (null when absent); G1..G3
// repeat them as columns (nil when absent) so that queries filter and group on them.
// Value is exact decimal text. Latest* order `latest` figures: the row's timestamp, then
// its batch seq, then its id (uuid v7, increasing within a batch).
type MeterFigure struct {
	MeterID     string
	Kind        string // hour, day (all aggregations); week, month (unique_count)
	WindowStart time.Time
	AccountID   string
	Groups      string
	G1, G2, G3  *string
	Value       string
	Slots       string // hour figures: the figure of each minute of the hour (meters package's encoding)
	LatestTS    *time.Time
	LatestSeq   int64
	LatestID    string
}

// MeterMemberDay is a distinct value a unique_count meter saw on one day, for one series
// (account and group), with the minutes of the day (0..1439, ascending) it was seen in.
// Series and value are numbers (meter_series, meter_values), which are cheaper to key.
type MeterMemberDay struct {
	Series  int64
	Member  int64
	Day     int32  // days since 1970-01-01 UTC
	Minutes string // comma-separated minutes of the day, ascending
}
