package meterbench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/testkit/usagebench"
)

// BenchmarkMeterValues measures GET /v1/meters/{key}/values, one client, through the
// HTTP API, for each of the three meters, on a database whose
// REVOPS_METER_ROWS usage rows (default 10M, over the last 30 days) were counted by the
// real consumer. It runs only when REVOPS_METER_DB names the database to use: created,
// loaded and counted when missing (the consumer's rows/s printed), kept for the next
// run. REVOPS_METER_READS (default 300) requests per kind.
func BenchmarkMeterValues(b *testing.B) {
	name := os.Getenv("REVOPS_METER_DB")
	if name == "" {
		b.Skip("REVOPS_METER_DB is not set: the values benchmark loads millions of rows")
	}
	ctx := context.Background()
	dbURL, st, pool := usagebench.OpenDatabase(b, name)
	var orgID string
	_ = pool.QueryRow(ctx, `SELECT id FROM organizations WHERE name = 'Meters'`).Scan(&orgID)
	fresh := orgID == ""
	if fresh {
		org, _, err := orgs.Create(ctx, st, "Meters", "meters@example.com")
		if err != nil {
			b.Fatal(err)
		}
		orgID = org.ID
	}
	s := usagebench.Serve(b, st, orgID, dbURL, pool)
	if fresh {
		// The meters first, while the environment has no usage: they are ready at once
		// and every loaded batch is the consumer's to count, not a backfill's.
		createMeters(b, s)
		loadUsage(b, s, usagebench.AtoiEnv("REVOPS_METER_ROWS", 10_000_000))
	}
	countWaiting(b, s) // all of a fresh load; what an interrupted count left otherwise
	var stored int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM usage_events WHERE environment_id = $1`, s.EnvID).Scan(&stored); err != nil {
		b.Fatal(err)
	}
	reads := usagebench.AtoiEnv("REVOPS_METER_READS", 300)
	for b.Loop() {
		fmt.Printf("\n== values on %d counted rows, %d requests each, 1 client, limit=1000\n", stored, reads)
		fmt.Printf("%-12s %-36s %8s %8s %8s %9s  load\n", "meter", "read", "p50 ms", "p99 ms", "max ms", "rows/ans")
		worst := 0.0
		for _, m := range meterDefs {
			for _, k := range valueReads(m) {
				p99 := readKind(b, s, m, k, reads)
				worst = max(worst, p99)
			}
		}
		b.ReportMetric(worst, "worst_p99_ms")
	}
}

// valueRead is one kind of values query: its name and its parameters (rng picks the
// account or region of each request).
type valueRead struct {
	name   string
	params func(rng *rand.Rand) url.Values
}

// valueReads are the reads of meter m. The region filter needs region among the
// meter's group_by keys (CONTRACT §18), so the max meter, which has none, has no such read.
func valueReads(m meter) []valueRead {
	now := time.Now().UTC()
	today := now.Truncate(24 * time.Hour)
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	base := func(window string, from, to time.Time) url.Values {
		v := url.Values{"window": {window}, "from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "limit": {"1000"}}
		if m.groupBy != "" {
			v.Set("group_by", m.groupBy)
		}
		return v
	}
	reads := []valueRead{
		{"one account's month, by day", func(rng *rand.Rand) url.Values {
			v := base("day", month, month.AddDate(0, 1, 0))
			v.Set("account_id", "acct_"+strconv.Itoa(rng.IntN(accounts)))
			return v
		}},
		{"every account's day (today)", func(*rand.Rand) url.Values { return base("day", today, today.AddDate(0, 0, 1)) }},
	}
	if m.groupBy != "" {
		reads = append(reads, valueRead{"filter[region], today by hour", func(rng *rand.Rand) url.Values {
			v := base("hour", today, today.AddDate(0, 0, 1))
			v.Set("filter[region]", regions[rng.IntN(len(regions))])
			return v
		}})
	}
	return reads
}

// readKind times n requests of kind k on meter m after 5 untimed ones (the first reads of
// a kind find its pages outside PostgreSQL's buffers), prints p50/p99/max and the mean
// rows per answer, and returns the p99 in ms.
func readKind(b *testing.B, s *usagebench.Server, m meter, k valueRead, n int) float64 {
	rng := rand.New(rand.NewPCG(7, uint64(len(k.name))))
	lat := make([]time.Duration, 0, n)
	rows := 0
	for i := range n + 5 {
		path := "/v1/meters/" + m.key + "/values?" + k.params(rng).Encode()
		msg, d, err := s.Get(path)
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(msg, []byte(`"object":"meter_values"`)) {
			b.Fatalf("GET %s: not meter values: %.200s", path, msg)
		}
		if i >= 5 {
			lat = append(lat, d)
			rows += bytes.Count(msg, []byte(`"window_start"`))
		}
	}
	p99 := usagebench.Millis(lat, 0.99)
	fmt.Printf("%-12s %-36s %8.2f %8.2f %8.2f %9.0f  %s\n", m.key, k.name, usagebench.Millis(lat, 0.5), p99,
		usagebench.Millis(lat, 1), float64(rows)/float64(n), usagebench.LoadAvg())
	return p99
}
