// Package usage holds the rules of usage-event ingestion (CONTRACT §5): decoding and
// validation of a batch, its canonical hash for idempotency, the period a metric falls in,
// and the in-batch aggregation of rollups, all pure; and the ingest and reads, which go
// through the store (ingest.go, read.go). No HTTP.
package usage

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/period"
)

// Modes of a batch.
const (
	ModeIncrement = "increment"
	ModeSet       = "set"
)

// Resolutions: the period a metric value belongs to, in UTC (platform/period).
const (
	Minute = period.Minute
	Hour   = period.Hour
	Day    = period.Day
	Week   = period.Week // ISO: starts on Monday
	Month  = period.Month
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
	Value      decimal.Decimal
	Resolution string
	// Metadata is compact JSON as sent ("{}" when absent); metaHash is its canonical hash.
	Metadata []byte
	metaHash [32]byte
	// Timestamp is the caller's time, or the time received when TimestampSet is false.
	Timestamp    time.Time
	TimestampSet bool
}

// ValidResolution tells whether r is one of the five resolutions.
func ValidResolution(r string) bool { return period.Valid(r) }

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
	Value decimal.Decimal
}

// Rollups aggregates a batch's metrics per rollup row, so each row is written once per
// batch. They are sorted by key: concurrent batches then lock shared rows in the same
// order and cannot deadlock each other.
func Rollups(b Batch) []Rollup {
	idx := make(map[RollupKey]int, len(b.Metrics))
	agg := make([]Rollup, 0, len(b.Metrics))
	for i := range b.Metrics {
		m := &b.Metrics[i]
		k := RollupKey{m.AccountID, m.Product, m.MetricName, m.Resolution, period.Start(m.Timestamp, m.Resolution)}
		j, ok := idx[k]
		switch {
		case !ok:
			idx[k] = len(agg)
			agg = append(agg, Rollup{RollupKey: k, Value: m.Value})
		case b.Mode == ModeSet:
			agg[j].Value = m.Value
		default:
			agg[j].Value = agg[j].Value.Add(&m.Value)
		}
	}
	// Sort positions, not the rows: a Rollup is large, and moving it costs more than
	// comparing keys.
	order := make([]int, len(agg))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return compareKey(&agg[i].RollupKey, &agg[j].RollupKey) })
	out := make([]Rollup, len(agg))
	for i, j := range order {
		out[i] = agg[j]
	}
	return out
}

func compareKey(a, b *RollupKey) int {
	if c := strings.Compare(a.AccountID, b.AccountID); c != 0 {
		return c
	}
	if c := strings.Compare(a.Product, b.Product); c != 0 {
		return c
	}
	if c := strings.Compare(a.MetricName, b.MetricName); c != 0 {
		return c
	}
	if c := strings.Compare(a.Resolution, b.Resolution); c != 0 {
		return c
	}
	return a.PeriodStart.Compare(b.PeriodStart)
}

// Hash is the canonical hash of a batch: equal for requests equal by value (1, 1.0 and 1e0
// alike; metadata by value, {} when absent; key order and whitespace ignored). A
// timestamp the caller left out is not part of it, so a retry later is still a replay.
// Hashes are stored: the bytes hashed must never change (reforig_test.go keeps the
// original). They are gathered in one buffer and hashed once.
func (b *Batch) Hash() string {
	buf := make([]byte, 0, 64+len(b.Metrics)*160)
	buf = appendField(buf, b.TransactionID)
	buf = appendField(buf, b.Mode)
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(b.Metrics)))
	var tmp [64]byte
	for i := range b.Metrics {
		m := &b.Metrics[i]
		buf = appendField(buf, m.AccountID)
		buf = appendField(buf, m.Product)
		buf = appendField(buf, m.MetricName)
		buf = appendField(buf, m.Value.AppendText(tmp[:0]))
		buf = appendField(buf, m.Resolution)
		buf = appendField(buf, m.metaHash[:])
		ts := append(tmp[:0], '-')
		if m.TimestampSet {
			ts = m.Timestamp.UTC().AppendFormat(tmp[:0], time.RFC3339Nano)
		}
		buf = appendField(buf, ts)
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

// appendField appends a length-prefixed field, so that ("ab","c") and ("a","bc") differ.
func appendField[T string | []byte](buf []byte, f T) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(len(f)))
	return append(buf, f...)
}
