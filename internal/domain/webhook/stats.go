package webhook

import (
	"context"
	"errors"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/period"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// An endpoint's stats (CONTRACT §23): GET /v1/webhook_endpoints/{id}/stats, read from the
// hourly rollups each attempt record writes (store.EndpointStatHours), never from the
// attempts. Counted are the attempts that were sent, succeeded or failed; a skipped
// attempt (no enabled endpoint, endpoint disabled) sent nothing and is left out.
// timeouts are the failed attempts whose exchange was cut by its deadline.

// Stats windows and bounds, as §18's values queries have them.
const (
	StatsWindowHour = period.Hour
	StatsWindowDay  = period.Day
	MaxStatsWindows = 1000
)

// StatsStore is what the stats need of the database.
type StatsStore interface {
	WebhookEndpointByID(ctx context.Context, env models.Env, id string) (models.WebhookEndpoint, error)
	EndpointStatHours(ctx context.Context, env models.Env, endpointID string, from, to time.Time) ([]store.StatHour, error)
}

// StatsQuery is a stats query, its parameters parsed by the API (types); Stats checks
// the window, the boundaries and the window bound.
type StatsQuery struct {
	From, To time.Time
	Window   string
}

// StatsWindow is one window of an endpoint's stats. P50MS and P95MS are the upper bounds
// of the fixed latency buckets (models.LatencyBucketsMS) holding the window's 50th and
// 95th percentile attempt (QuantileMS).
type StatsWindow struct {
	Start, End                            time.Time
	Attempts, Succeeded, Failed, Timeouts int64
	SuccessRate                           float64
	P50MS, P95MS                          int64
}

// errStatsQuery is the cause of every refused stats query.
var errStatsQuery = errors.New("invalid stats query")

func invalidStats(param, format string, args ...any) error {
	return apperr.Invalid(errStatsQuery, apperr.CodeParameterInvalid, param, format, args...)
}

// EndpointStats answers a stats query for endpoint id of env: its windows with at least
// one attempt, oldest first. An endpoint of another environment, or none, is ErrNotFound.
func EndpointStats(ctx context.Context, st StatsStore, env models.Env, id string, q StatsQuery) ([]StatsWindow, error) {
	if err := CheckStatsQuery(&q); err != nil {
		return nil, err
	}
	if _, err := st.WebhookEndpointByID(ctx, env, id); err != nil {
		return nil, err
	}
	hours, err := st.EndpointStatHours(ctx, env, id, q.From, q.To)
	if err != nil {
		return nil, err
	}
	return statsWindows(hours, q.Window), nil
}

// CheckStatsQuery checks the window, that from and to fall on its boundaries (UTC) with
// to after from, and that they span at most MaxStatsWindows windows (CONTRACT §18's rules).
func CheckStatsQuery(q *StatsQuery) error {
	if q.Window != StatsWindowHour && q.Window != StatsWindowDay {
		return invalidStats("window", "window must be hour or day.")
	}
	var f *period.Fault
	if q.From, q.To, f = period.CheckRange(q.From, q.To, q.Window, MaxStatsWindows); f != nil {
		return invalidStats(f.Param, "%s", f.Message)
	}
	return nil
}

// statsWindows adds the hours (oldest first) up into windows.
func statsWindows(hours []store.StatHour, w string) []StatsWindow {
	var out []StatsWindow
	var buckets [models.LatencyBuckets]int64
	flush := func() {
		if n := len(out); n > 0 {
			w := &out[n-1]
			w.SuccessRate = float64(w.Succeeded) / float64(w.Attempts)
			w.P50MS, w.P95MS = QuantileMS(buckets[:], 50), QuantileMS(buckets[:], 95)
		}
	}
	for _, h := range hours {
		if h.Attempts == 0 {
			continue
		}
		start := period.Start(h.HourStart, w)
		if n := len(out); n == 0 || !out[n-1].Start.Equal(start) {
			flush()
			out = append(out, StatsWindow{Start: start, End: period.End(start, w)})
			buckets = [models.LatencyBuckets]int64{}
		}
		w := &out[len(out)-1]
		w.Attempts += h.Attempts
		w.Succeeded += h.Succeeded
		w.Failed += h.Failed
		w.Timeouts += h.Timeouts
		for i, c := range h.Buckets {
			buckets[i] += c
		}
	}
	flush()
	return out
}

// QuantileMS is the pct-th percentile of the counted durations as the upper bound of
// the bucket holding it. The rank is the nearest rank: the ⌈pct/100 · n⌉-th smallest of
// the n durations (at least the first). buckets has one count per models.LatencyBucketsMS
// bound, then the open bucket; the stats answer and the dashboard's figures both use it. The open bucket above the last bound (30 s)
// reports that last bound, as Prometheus's histogram_quantile does: an exchange is cut at
// 30 s (CONTRACT §8), so what lies above it is that cut's last milliseconds.
func QuantileMS(buckets []int64, pct int64) int64 {
	var n int64
	for _, c := range buckets {
		n += c
	}
	rank := max(1, (pct*n+99)/100)
	var seen int64
	for i, c := range buckets {
		if seen += c; seen >= rank && i < len(models.LatencyBucketsMS) {
			return models.LatencyBucketsMS[i]
		}
	}
	return models.LatencyBucketsMS[len(models.LatencyBucketsMS)-1]
}
