// Package usage holds the rules of usage-event ingestion (CONTRACT §5): decoding and
// validation of a batch, its canonical hash for idempotency, the period a metric falls in,
// and the in-batch aggregation of rollups. It is pure: no database, no HTTP.
package usage

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"sort"
	"time"
)

// Modes of a batch.
const (
	ModeIncrement = "increment"
	ModeSet       = "set"
)

// Resolutions: the period a metric value belongs to, in UTC.
const (
	Minute = "minute"
	Hour   = "hour"
	Day    = "day"
	Week   = "week" // ISO: starts on Monday
	Month  = "month"
)

// Limits of CONTRACT §5.
const (
	MaxMetrics       = 1000
	MaxIDLength      = 255
	MaxMetadataBytes = 16 << 10
	MaxPast          = 35 * 24 * time.Hour
	MaxFuture        = 5 * time.Minute
)

// Batch is one valid request.
type Batch struct {
	TransactionID string
	Mode          string
	Metrics       []Metric
}

// Metric is one valid measurement.
type Metric struct {
	AccountID  string
	Product    string
	MetricName string
	Value      Decimal
	Resolution string
	// Metadata is compact JSON as sent ("{}" when absent); metaHash is its canonical hash.
	Metadata []byte
	metaHash [32]byte
	// Timestamp is the caller's time, or the time received when TimestampSet is false.
	Timestamp    time.Time
	TimestampSet bool
}

// ValidResolution tells whether r is one of the five resolutions.
func ValidResolution(r string) bool {
	switch r {
	case Minute, Hour, Day, Week, Month:
		return true
	}
	return false
}

// PeriodStart is the start of the period of resolution res that contains t, in UTC.
func PeriodStart(t time.Time, res string) time.Time {
	t = t.UTC()
	switch res {
	case Minute:
		return t.Truncate(time.Minute)
	case Hour:
		return t.Truncate(time.Hour)
	case Day:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	case Week:
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		return time.Date(t.Year(), t.Month(), t.Day()-back, 0, 0, 0, 0, time.UTC)
	case Month:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return t // unreachable: Decode lets only the five resolutions through
}

// RollupKey identifies one rollup row within an environment.
type RollupKey struct {
	AccountID   string
	Product     string
	MetricName  string
	Resolution  string
	PeriodStart time.Time
}

// Rollup is the effect of a batch on one rollup row: an amount to add (increment) or the
// value to set (set; the last metric of the batch for that row wins).
type Rollup struct {
	RollupKey
	Value Decimal
}

// Rollups aggregates a batch's metrics per rollup row, so each row is written once per
// batch. They are sorted by key: concurrent batches then lock shared rows in the same
// order and cannot deadlock each other.
func Rollups(b Batch) []Rollup {
	idx := make(map[RollupKey]int, len(b.Metrics))
	out := make([]Rollup, 0, len(b.Metrics))
	for i := range b.Metrics {
		m := &b.Metrics[i]
		k := RollupKey{m.AccountID, m.Product, m.MetricName, m.Resolution, PeriodStart(m.Timestamp, m.Resolution)}
		j, ok := idx[k]
		switch {
		case !ok:
			idx[k] = len(out)
			out = append(out, Rollup{RollupKey: k, Value: m.Value})
		case b.Mode == ModeSet:
			out[j].Value = m.Value
		default:
			out[j].Value = out[j].Value.Add(&m.Value)
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessKey(&out[i].RollupKey, &out[j].RollupKey) })
	return out
}

func lessKey(a, b *RollupKey) bool {
	switch {
	case a.AccountID != b.AccountID:
		return a.AccountID < b.AccountID
	case a.Product != b.Product:
		return a.Product < b.Product
	case a.MetricName != b.MetricName:
		return a.MetricName < b.MetricName
	case a.Resolution != b.Resolution:
		return a.Resolution < b.Resolution
	}
	return a.PeriodStart.Before(b.PeriodStart)
}

// Hash is the canonical hash of a batch: equal for requests equal by value (1, 1.0 and 1e0
// alike; metadata by value, {} when absent; key order and whitespace ignored). A
// timestamp the caller left out is not part of it, so a retry later is still a replay.
func (b *Batch) Hash() string {
	h := sha256.New()
	writeField(h, []byte(b.TransactionID))
	writeField(h, []byte(b.Mode))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b.Metrics)))
	h.Write(n[:])
	for i := range b.Metrics {
		m := &b.Metrics[i]
		writeField(h, []byte(m.AccountID))
		writeField(h, []byte(m.Product))
		writeField(h, []byte(m.MetricName))
		writeField(h, []byte(m.Value.String()))
		writeField(h, []byte(m.Resolution))
		writeField(h, m.metaHash[:])
		ts := "-"
		if m.TimestampSet {
			ts = m.Timestamp.UTC().Format(time.RFC3339Nano)
		}
		writeField(h, []byte(ts))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// writeField writes a length-prefixed field, so that ("ab","c") and ("a","bc") differ.
func writeField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}
