package meterbench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/testkit/usagebench"
)

// loadUsage writes rows usage rows into s's environment as the ingest would have stored
// them, in batches of 1,000 received evenly over the last 30 days (each row's timestamp
// up to an hour before its batch's receipt), every batch waiting for the consumer (gen
// NULL): the meters' figures are then counted by the real consumer (countWaiting), not
// by the loader. Rows are generated inside PostgreSQL with usagebench's loader (indexes
// dropped and rebuilt). usage_rollups is not filled: meters never read it.
func loadUsage(b testing.TB, s *usagebench.Server, rows int) {
	l := usagebench.NewLoader(b, s.Pool, 0.21)
	defer l.Release()
	tables := []string{"usage_batches", "usage_events"}
	defs := l.DropSecondaryIndexes(tables...)
	nb := (rows + batchSize - 1) / batchSize
	const recv = `$4::timestamptz - interval '30 days' + s * (interval '30 days' / $2::int)`
	now := time.Now().UTC() // one receipt clock for batches and rows
	l.Exec("usage_batches", `INSERT INTO usage_batches (seq, environment_id, transaction_id, mode, body_hash, response,
		metrics_count, received_at, created_at)
		SELECT s, $1, 'load-' || s, 'increment', md5(s::text), '{}', least(1000, $3::int - (s - 1) * 1000), `+recv+`, `+recv+`
		FROM generate_series(1, $2::int) s`, s.EnvID, nb, rows, now)
	l.Exec("usage_batches seq", `SELECT setval(pg_get_serial_sequence('usage_batches', 'seq'), $1::bigint)`, nb)
	l.Exec("usage_events", `INSERT INTO usage_events (id, environment_id, batch_seq, transaction_id, mode, account_id,
		product, metric_name, metric_value, metric_resolution, metadata, timestamp, received_at, created_at)
		SELECT `+usagebench.UUIDText("h")+`, $1, s, 'load-' || s, 'increment', 'acct_' || floor(random() * 250)::int,
			'platform', 'api_calls', (floor(random() * 1000) + 0.25)::numeric, 'hour',
			jsonb_build_object('region', ('{us-east-1,us-west-2,eu-west-1,ap-south-1}'::text[])[1 + floor(random() * 4)::int],
				'plan', ('{free,pro,enterprise}'::text[])[1 + floor(random() * 3)::int],
				'user', 'user_' || floor(random() * 10000)::int),
			rc - random() * interval '1 hour', rc, rc
		FROM (SELECT g, s, rc, `+usagebench.UUIDv7Hex("rc", "g")+` AS h
			FROM (SELECT g, s, `+recv+` AS rc FROM (SELECT g, g / 1000 + 1 AS s FROM generate_series(0, $3::int - 1) g) a) b) c`,
		s.EnvID, nb, rows, now)
	l.Rebuild(defs, tables...)
}

// countWaiting runs the consumer (meters.Consume, as a worker runs it, alone here) until
// no batch waits, and prints how fast it counted, with its CPU and the backends'.
func countWaiting(b testing.TB, s *usagebench.Server) {
	ctx := context.Background()
	var waiting int64
	if err := s.Pool.QueryRow(ctx, `SELECT coalesce(sum(metrics_count), 0) FROM usage_batches WHERE gen IS NULL`).Scan(&waiting); err != nil {
		b.Fatal(err)
	}
	if waiting == 0 {
		return
	}
	fmt.Printf("consume: %d rows waiting  load %s\n", waiting, usagebench.LoadAvg())
	cpu := newCPUMeter(s.Pool)
	t0, shown := time.Now(), time.Now()
	batches := 0
	for {
		n, err := meterstest.Consume(ctx, s.Store)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
		batches += n
		if time.Since(shown) > 30*time.Second {
			cpu.sample()
			shown = time.Now()
			fmt.Printf("consume: %d batches in %.0f s  load %s\n", batches, time.Since(t0).Seconds(), usagebench.LoadAvg())
		}
	}
	wall := time.Since(t0)
	self, pg := cpu.used()
	k := float64(waiting) / 1000
	fmt.Printf("consume: %d rows (%d batches) in %.1f s: %.0f rows/s; CPU per 1,000 rows %.2f ms process + %.2f ms PostgreSQL  load %s\n",
		waiting, batches, wall.Seconds(), float64(waiting)/wall.Seconds(),
		float64(self.Microseconds())/1000/k, float64(pg.Microseconds())/1000/k, usagebench.LoadAvg())
}
