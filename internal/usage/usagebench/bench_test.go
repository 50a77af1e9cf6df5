package usagebench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/config"
	"github.com/revops/revops/internal/keys"
	"github.com/revops/revops/internal/orgs"
	"github.com/revops/revops/internal/replay"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testdb"
)

// env is one benchmark database with the API in front of it and a COPY target beside it.
type env struct {
	url    string
	srv    *httptest.Server
	key    string
	client *http.Client
	pool   *pgxpool.Pool
	envID  string // the key's environment (scale benchmark)
}

func setup(b *testing.B) *env {
	b.Helper()
	ctx := context.Background()
	url := testdb.URL(b)
	st := testdb.Open(b, url)
	org, _, err := orgs.Create(ctx, st, "Bench", "bench@example.com")
	if err != nil {
		b.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	// The baseline's table has the same columns and indexes as usage_events.
	if _, err := pool.Exec(ctx, `CREATE TABLE usage_events_copy (LIKE usage_events INCLUDING ALL)`); err != nil {
		b.Fatal(err)
	}
	return serve(b, st, org.ID, url, pool)
}

// serve puts the API in front of st and gives a new secret sandbox key of org to the
// benchmark's client.
func serve(b *testing.B, st *store.Store, orgID, url string, pool *pgxpool.Pool) *env {
	b.Helper()
	cfg, err := config.Load(flag.NewFlagSet("bench", flag.ContinueOnError), "serve", []string{"--rate-limit", "0", "--env-rate-limit", "0"})
	if err != nil {
		b.Fatal(err)
	}
	km := keys.NewManager(st)
	k, err := km.Create(context.Background(), orgID, "sandbox", "secret")
	if err != nil {
		b.Fatal(err)
	}
	eps, err := app.NewEndpoints(cfg, st)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Deps{Config: cfg, Store: st, Keys: km, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Endpoints: eps, Replay: &replay.Service{Store: st}}))
	b.Cleanup(srv.Close)
	tr := &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128}
	b.Cleanup(tr.CloseIdleConnections)
	return &env{url: url, srv: srv, key: k.Plain, client: &http.Client{Transport: tr}, pool: pool}
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
				b.ReportMetric(ms(lat, 0.50), "p50_ms")
				b.ReportMetric(ms(lat, 0.99), "p99_ms")
				b.ReportMetric(base, "copy_metrics/s")
				b.ReportMetric(ours/base, "ratio")
			})
		}
	}
}

// runAPI sends b.N requests over clients goroutines; it returns metrics/s and latencies.
func (e *env) runAPI(b *testing.B, size, clients int, seq *atomic.Int64) (float64, []time.Duration) {
	rate, lat, err := e.ingest(b.N, size, clients, seq)
	if err != nil {
		b.Fatal(err)
	}
	return rate, lat
}

// ingest sends n requests of size metrics over clients goroutines; it returns metrics/s
// and each request's latency.
func (e *env) ingest(n, size, clients int, seq *atomic.Int64) (float64, []time.Duration, error) {
	lat := make([]time.Duration, n)
	wall, err := spread(n, clients, func(c int, i int64) error {
		body := batchBody(fmt.Sprintf("tx-%d", seq.Add(1)), c, size)
		t0 := time.Now()
		if err := e.post(body); err != nil {
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

// spread runs do for i from 0 to n-1 over clients goroutines (c is the goroutine's
// number, which picks its accounts) and returns the wall time. A goroutine stops at its
// first error; one of them is returned after all have stopped.
func spread(n, clients int, do func(c int, i int64) error) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if err := do(c, i); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return 0, err
	}
	return time.Since(start), nil
}

func (e *env) post(body []byte) error {
	req, err := http.NewRequest("POST", e.srv.URL+"/v1/usage/events", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		return fmt.Errorf("status %d: %s", res.StatusCode, msg)
	}
	return nil
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
func (e *env) runCopy(b *testing.B, size, clients int, seq *atomic.Int64) float64 {
	rate, err := e.copyBatches(context.Background(), "usage_events_copy", "env", b.N, size, clients, seq)
	if err != nil {
		b.Fatal(err)
	}
	return rate
}

// copyBatches writes n batches of size rows of environment envID into table with COPY
// over clients goroutines; it returns rows/s.
func (e *env) copyBatches(ctx context.Context, table, envID string, n, size, clients int, seq *atomic.Int64) (float64, error) {
	cols := []string{"id", "environment_id", "batch_seq", "transaction_id", "mode", "account_id", "product", "metric_name",
		"metric_value", "metric_resolution", "metadata", "timestamp", "received_at", "created_at"}
	wall, err := spread(n, clients, func(c int, _ int64) error {
		rows := copyRows(seq.Add(1), envID, c, size)
		_, err := e.pool.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
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

func ms(lat []time.Duration, q float64) float64 {
	if len(lat) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), lat...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[int(q*float64(len(s)-1))].Microseconds()) / 1000
}
