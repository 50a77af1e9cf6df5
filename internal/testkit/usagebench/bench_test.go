package usagebench

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// setup is Setup with the COPY baseline's table beside usage_events: same columns, same
// indexes.
func setup(b *testing.B) *Server {
	b.Helper()
	e := Setup(b)
	if _, err := e.Pool.Exec(context.Background(), `CREATE TABLE usage_events_copy (LIKE usage_events INCLUDING ALL)`); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkIngest posts batches of 1, 100 and 1000 metrics from 1, 8 and 32 concurrent
// clients, then writes the same number of rows with COPY; it reports metrics/s, request
// latency p50/p99 and the ratio to COPY. One op is one request (and one COPY batch).
func BenchmarkIngest(b *testing.B) {
	e := setup(b)
	var seq atomic.Int64
	for _, size := range []int{1, 100, 1000} {
		for _, clients := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("batch=%d/clients=%d", size, clients), func(b *testing.B) {
				ours, lat := e.runAPI(b, size, clients, &seq)
				base := e.runCopy(b, size, clients, &seq)
				b.ReportMetric(ours, "metrics/s")
				b.ReportMetric(Millis(lat, 0.50), "p50_ms")
				b.ReportMetric(Millis(lat, 0.99), "p99_ms")
				b.ReportMetric(base, "copy_metrics/s")
				b.ReportMetric(ours/base, "ratio")
			})
		}
	}
}

// runAPI sends b.N requests over clients goroutines; it returns metrics/s and latencies.
func (e *Server) runAPI(b *testing.B, size, clients int, seq *atomic.Int64) (float64, []time.Duration) {
	rate, lat, err := e.ingest(b.N, size, clients, seq)
	if err != nil {
		b.Fatal(err)
	}
	return rate, lat
}

// ingest sends n requests of size metrics over clients goroutines; it returns metrics/s
// and each request's latency.
func (e *Server) ingest(n, size, clients int, seq *atomic.Int64) (float64, []time.Duration, error) {
	lat := make([]time.Duration, n)
	wall, err := Spread(n, clients, func(c int, i int64) error {
		body := batchBody(fmt.Sprintf("tx-%d", seq.Add(1)), c, size)
		t0 := time.Now()
		if err := e.Post(body); err != nil {
			return err
		}
		lat[i] = time.Since(t0)
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return float64(n*size) / wall.Seconds(), lat, nil
}

// batchBody is one request. Each client has its own accounts (a customer's usage comes
// from one backend); within a batch 1000 metrics fall on 500 rollup rows.
func batchBody(tx string, client, size int) []byte {
	var sb strings.Builder
	sb.Grow(64 + size*150)
	fmt.Fprintf(&sb, `{"transaction_id":%q,"mode":"increment","event_metrics":[`, tx)
	names := []string{"api_calls", "storage_gb", "seats", "emails"}
	for i := range size {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"account_id":"c%d_acct_%d","product":"platform","metric_name":%q,"metric_value":%d.5,"metric_resolution":"hour","metadata":{"region":"eu-west-1"}}`,
			client, i%250, names[i%4], i%97)
	}
	sb.WriteString("]}")
	return []byte(sb.String())
}

// runCopy writes b.N batches of size rows with pgx CopyFrom over clients goroutines, the
// same rows (already built in memory) into a table shaped like usage_events.
func (e *Server) runCopy(b *testing.B, size, clients int, seq *atomic.Int64) float64 {
	rate, err := e.copyBatches(context.Background(), "usage_events_copy", "env", b.N, size, clients, seq)
	if err != nil {
		b.Fatal(err)
	}
	return rate
}

// copyBatches writes n batches of size rows of environment envID into table with COPY
// over clients goroutines; it returns rows/s.
func (e *Server) copyBatches(ctx context.Context, table, envID string, n, size, clients int, seq *atomic.Int64) (float64, error) {
	cols := []string{"id", "environment_id", "batch_seq", "transaction_id", "mode", "account_id", "product", "metric_name",
		"metric_value", "metric_resolution", "metadata", "timestamp", "received_at", "created_at"}
	wall, err := Spread(n, clients, func(c int, _ int64) error {
		rows := copyRows(seq.Add(1), envID, c, size)
		_, err := e.Pool.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
		return err
	})
	if err != nil {
		return 0, err
	}
	return float64(n*size) / wall.Seconds(), nil
}

func copyRows(batch int64, envID string, client, size int) [][]any {
	now := time.Now().UTC()
	names := []string{"api_calls", "storage_gb", "seats", "emails"}
	rows := make([][]any, size)
	for i := range rows {
		rows[i] = []any{uuid.Must(uuid.NewV7()).String(), envID, batch, fmt.Sprint("tx-", batch), "increment",
			fmt.Sprintf("c%d_acct_%d", client, i%250), "platform", names[i%4], fmt.Sprintf("%d.5", i%97), "hour",
			`{"region":"eu-west-1"}`, now, now, now}
	}
	return rows
}
