package e2e

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"gorm.io/gorm"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/devstack"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/syncbuf"
	"github.com/revops/revops/workflows/wire"
)

// purgePageRows is the purge page of the test's process: small, so that each deleted
// meter's figures (seededPurgeRows) take some thirty pages.
const purgePageRows = 50

// seededPurgeRows is what seedMeterFigures writes for a meter: 20 series and 10 values,
// a member day for each of them and 5 days, and 500 hour figures.
const seededPurgeRows = 20 + 10 + 20*10*5 + 500

// CONTRACT §21 "Deleting a meter", on the dev shape (embedded Temporal, the API and the
// worker in one process as `revops dev` wires them, PostgreSQL). Environment A deletes
// four large meters while environment B ingests and reads its own meter's values. A test
// transaction holds a row lock on one figure of each deleted meter, so no purge can end
// before the test lets it: each DELETE answers 200 while its purge row and figures are
// still there (the answer does not wait for the purge), the meter is 404 and its key can
// be used again at once, its MeterPurge run is open on revops-jobs fair by A, and B's
// ingest and values are answered all along. Once the lock goes, every purge ends in many
// bounded pages, leaving no figure of the deleted meters and no purge row, and B's
// figures untouched.
func TestDeletingLargeMetersAnswersAtOnceAndPurgesInTheBackground(t *testing.T) {
	tt := newTwoTenants(t, app.Parts{PurgeRows: purgePageRows})
	ctx := context.Background()
	db, a, b, tc := tt.db, tt.a, tt.b, tt.tc

	if err := b.post(ctx, "/v1/meters", `{"key":"b-calls","filter":{"metric_name":"calls"},"aggregation":"count"}`, nil); err != nil {
		t.Fatal(err)
	}
	// B's rows all fall in one hour, whenever the test runs.
	hour := time.Now().UTC().Truncate(time.Hour)
	bBatches := 0
	ingestB := func() {
		t.Helper()
		bBatches++
		body := fmt.Sprintf(`{"transaction_id":"b-%d","mode":"increment","event_metrics":[{"account_id":"acct-b","product":"api",`+
			`"metric_name":"calls","metric_value":1,"metric_resolution":"minute","timestamp":%q}]}`, bBatches, hour.Format(time.RFC3339))
		if err := b.post(ctx, "/v1/usage/events", body, nil); err != nil {
			t.Fatalf("B's ingest while A deletes: %v", err)
		}
	}
	valuesB := meterstest.HTTPValues(b.get)
	hourOfB := meters.ValuesQuery{From: hour, To: hour.Add(time.Hour), Window: meters.WindowHour}
	ingestB()

	keysA := []string{"a-users-0", "a-users-1", "a-users-2", "a-users-3"}
	var idsA []string
	for _, k := range keysA {
		var obj struct{ ID string }
		if err := a.post(ctx, "/v1/meters", `{"key":"`+k+`","filter":{"metric_name":"calls"},"aggregation":"unique_count","value_key":"user"}`, &obj); err != nil {
			t.Fatal(err)
		}
		seedMeterFigures(t, db.SQL(), obj.ID)
		idsA = append(idsA, obj.ID)
	}
	hold := db.SQL().Begin()
	defer hold.Rollback()
	var held []int
	if err := hold.Raw(`SELECT 1 FROM meter_figures WHERE meter_id IN ? AND window_start = ? FOR UPDATE`, idsA, seedHour).Scan(&held).Error; err != nil || len(held) != len(idsA) {
		t.Fatalf("locked %d figures (%v), want one of each meter", len(held), err)
	}

	for i, k := range keysA {
		var gone struct {
			ID      string
			Deleted bool
		}
		// A bound on the wait only turns a DELETE that waits for its purge (which the lock
		// holds back) into a failure rather than a hung test.
		delCtx, cancelDel := context.WithTimeout(ctx, 30*time.Second)
		err := a.do(delCtx, http.MethodDelete, "/v1/meters/"+k, "", http.StatusOK, &gone)
		cancelDel()
		if err != nil || !gone.Deleted || gone.ID != idsA[i] {
			t.Fatalf("DELETE %s: %+v, %v", k, gone, err)
		}
		// Right after the answer: the purge has not ended (its row and figures are there).
		if n := countSQL(t, db.SQL(), `SELECT COUNT(*) FROM meter_purges WHERE meter_id = ? AND environment_id = ?`, idsA[i], db.Env.ID); n != 1 {
			t.Fatalf("meter %s answered deleted with %d purge rows, want its one awaiting", k, n)
		}
		if n := countSQL(t, db.SQL(), `SELECT COUNT(*) FROM meter_figures WHERE meter_id = ?`, idsA[i]); n == 0 {
			t.Fatalf("meter %s answered deleted after its figures were purged", k)
		}
		if err := a.do(ctx, http.MethodGet, "/v1/meters/"+k, "", http.StatusNotFound, nil); err != nil {
			t.Fatalf("deleted meter: %v", err)
		}
		var again struct{ ID string }
		if err := a.post(ctx, "/v1/meters", `{"key":"`+k+`","filter":{"metric_name":"calls"},"aggregation":"count"}`, &again); err != nil || again.ID == idsA[i] {
			t.Fatalf("re-creating %s at once: %+v, %v", k, again, err)
		}
		ingestB()
		if _, err := valuesB(ctx, "b-calls", hourOfB); err != nil {
			t.Fatalf("B's values while A deletes: %v", err)
		}
	}
	for _, id := range idsA {
		waitPurgeRunning(t, tc, id, db.Env.ID)
	}
	lastB := time.Now()
	meterstest.WaitAsOf(t, valuesB, "b-calls", lastB, 2*time.Minute) // B's consumer goes on while A's purges wait
	if err := hold.Rollback().Error; err != nil {
		t.Fatal(err)
	}

	waitCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for _, id := range idsA {
		var res wire.MeterPurgeResult
		if err := tc.GetWorkflow(waitCtx, wire.MeterPurgeWorkflowID(id), "").Get(waitCtx, &res); err != nil {
			t.Fatalf("purge of %s: %v", id, err)
		}
		if res.Pages < seededPurgeRows/purgePageRows || res.Rows > seededPurgeRows {
			t.Errorf("purge of %s: %+v, want at least %d pages of at most %d rows", id, res, seededPurgeRows/purgePageRows, purgePageRows)
		}
		t.Logf("purge of %s: %d pages, %d rows", id, res.Pages, res.Rows)
	}
	if n := countSQL(t, db.SQL(), `SELECT
		(SELECT COUNT(*) FROM meter_purges) + (SELECT COUNT(*) FROM meter_figures WHERE meter_id IN ?) +
		(SELECT COUNT(*) FROM meter_series WHERE meter_id IN ?) + (SELECT COUNT(*) FROM meter_values WHERE meter_id IN ?) +
		(SELECT COUNT(*) FROM meter_member_days d WHERE NOT EXISTS (SELECT 1 FROM meter_series s WHERE s.id = d.series))`,
		idsA, idsA, idsA); n != 0 {
		t.Fatalf("%d purge rows, figure rows of the deleted meters or orphaned member days left", n)
	}
	page, err := valuesB(ctx, "b-calls", hourOfB)
	if err != nil || len(page.Data) != 1 || page.Data[0].Value != fmt.Sprint(bBatches) {
		t.Fatalf("B's values after A's purges: %+v, %v; want %d rows counted", page, err, bBatches)
	}
}

// seedHour is the first hour of seedMeterFigures' figures (the one the test locks).
var seedHour = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// seedMeterFigures writes seededPurgeRows figure rows of a meter, in every table a purge
// empties (far faster than ingesting the usage that would make them).
func seedMeterFigures(t *testing.T, sql *gorm.DB, meterID string) {
	t.Helper()
	for _, stmt := range []string{
		`INSERT INTO meter_series (meter_id, account_id, groups) SELECT ?, 'acct-' || i, '[null]' FROM generate_series(1, 20) i`,
		`INSERT INTO meter_values (meter_id, value) SELECT ?, 'user-' || i FROM generate_series(1, 10) i`,
		`INSERT INTO meter_member_days (series, member, day, minutes) SELECT s.id, v.id, d, '0'
			FROM meter_series s JOIN meter_values v ON v.meter_id = s.meter_id CROSS JOIN generate_series(20000, 20004) d WHERE s.meter_id = ?`,
		`INSERT INTO meter_figures (meter_id, kind, window_start, account_id, groups, value)
			SELECT ?, 'hour', TIMESTAMPTZ '2026-01-01 00:00:00+00' + (i * INTERVAL '1 hour'), 'acct-1', '[]', '1' FROM generate_series(0, 499) i`,
	} {
		if err := sql.Exec(stmt, meterID).Error; err != nil {
			t.Fatal(err)
		}
	}
}

func countSQL(t *testing.T, sql *gorm.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := sql.Raw(q, args...).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// waitPurgeRunning waits until the deleted meter's MeterPurge run is open, on
// revops-jobs, fair by its environment.
func waitPurgeRunning(t *testing.T, tc client.Client, meterID, envID string) {
	t.Helper()
	waitJobRunning(t, tc, wire.MeterPurgeWorkflowID(meterID), envID)
}

// waitJobRunning waits until the job's run wid is open, on revops-jobs, fair by envID.
func waitJobRunning(t *testing.T, tc client.Client, wid, envID string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		d, err := tc.DescribeWorkflowExecution(context.Background(), wid, "")
		if err == nil {
			info := d.GetWorkflowExecutionInfo()
			if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || info.GetTaskQueue() != wire.JobsTaskQueue ||
				info.GetPriority().GetFairnessKey() != envID {
				t.Fatalf("%s: %s on %s fair by %q, want running on %s fair by %s", wid, info.GetStatus(), info.GetTaskQueue(),
					info.GetPriority().GetFairnessKey(), wire.JobsTaskQueue, envID)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no run of %s: %v", wid, err)
		}
	}
}

// startDev runs the dev shape (embedded Temporal, app.Run with the API and the worker,
// sweeping every 200 ms unless p says otherwise) on st with p's page bounds and the extra
// flags, and gives the API's base URL and a Temporal client; both stop when the test
// ends.
func startDev(t *testing.T, st *store.Store, p app.Parts, flags ...string) (string, client.Client) {
	t.Helper()
	ctx := context.Background()
	temporalAddr := freeAddr(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("process log:\n%s", logs.String())
		}
	})
	stack, err := devstack.Start(ctx, devstack.Options{DataDir: t.TempDir(), FrontendAddr: temporalAddr,
		Namespace: "default", SearchAttributes: wire.SearchAttributes, Logger: quiet})
	if err != nil {
		t.Fatalf("start Temporal: %v", err)
	}
	t.Cleanup(func() { _ = stack.Stop() })
	addEndpointIDsAttribute(t, temporalAddr, "default") // as revops dev registers it
	cfg, err := config.Load(flag.NewFlagSet("dev", flag.ContinueOnError), "serve", append([]string{
		"--http-addr", "127.0.0.1:0", "--metrics-addr", "", "--rate-limit", "0", "--env-rate-limit", "0",
		"--temporal-address", temporalAddr,
	}, flags...))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := client.Dial(app.TemporalOptions(cfg, quiet))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	runCtx, stop := context.WithCancel(ctx)
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		p.API, p.Worker, p.Ready, p.SweepEvery = true, true, ready, cmp.Or(p.SweepEvery, 200*time.Millisecond)
		done <- app.Run(runCtx, cfg, log, st, tc, p)
	}()
	t.Cleanup(func() { stop(); <-done })
	select {
	case addr := <-ready:
		return "http://" + addr, tc
	case err := <-done:
		t.Fatalf("dev process did not start: %v", err)
		return "", nil
	}
}
