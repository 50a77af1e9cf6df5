package webhook

import (
	"testing"

	"github.com/revops/revops/models"
)

// The quantile's rank rule (nearest rank, ⌈q·n⌉-th shortest) and the open bucket's bound.
func TestStatQuantileMS(t *testing.T) {
	const open = len(models.LatencyBucketsMS)
	counts := func(kv ...int) [models.LatencyBuckets]int64 {
		var b [models.LatencyBuckets]int64
		for i := 0; i < len(kv); i += 2 {
			b[kv[i]] = int64(kv[i+1])
		}
		return b
	}
	for _, c := range []struct {
		name     string
		buckets  [models.LatencyBuckets]int64
		p50, p95 int64
	}{
		{"one attempt", counts(0, 1), 10, 10},
		{"19 fast, 1 past 30 s: the 19th is fast", counts(0, 19, open, 1), 10, 10},
		{"18 fast, 2 past 30 s: the 19th is past", counts(0, 18, open, 2), 10, 30000},
		{"all past 30 s", counts(open, 5), 30000, 30000},
		{"half and half: the 2nd of 4 is in the first bucket", counts(1, 2, 6, 2), 25, 1000},
		{"3 attempts: the 2nd is the median", counts(2, 1, 4, 1, 10, 1), 250, 30000},
	} {
		if p50, p95 := QuantileMS(c.buckets[:], 50), QuantileMS(c.buckets[:], 95); p50 != c.p50 || p95 != c.p95 {
			t.Errorf("%s: p50 %d p95 %d, want %d %d", c.name, p50, p95, c.p50, c.p95)
		}
	}
}
