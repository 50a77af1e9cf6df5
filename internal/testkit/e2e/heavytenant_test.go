package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"gorm.io/gorm"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows"
)

// The heavy-tenant suite of CONTRACT §21 for meter jobs and the meter consumer:
// environment A does the heavy thing while environment B (the stack's sandbox, whose
// endpoint is the test's HTTPS receiver) keeps working. Order and bounds are asserted,
// never durations; contexts bound only a hang.

// heavyEnvs gives the stack's environment B (with the receiver's endpoint) and a second
// environment A of the same organization.
func heavyEnvs(t *testing.T, st *store.Store, b models.Env) models.Env {
	t.Helper()
	a, err := st.Environment(context.Background(), b.OrganizationID, models.EnvLive)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// ingest stores one usage batch body in env.
func ingest(ctx context.Context, t *testing.T, st *store.Store, env models.Env, body []byte) {
	t.Helper()
	if err := meterstest.Ingest(ctx, st, env, body, time.Now()); err != nil {
		t.Fatalf("ingest in %s: %v", env.Name, err)
	}
}

// bBatch is one row of B's metric, sent now.
func bBatch(txID string) []byte {
	return fmt.Appendf(nil, `{"transaction_id":%q,"mode":"increment","event_metrics":[{"account_id":"acct-b","product":"api",`+
		`"metric_name":"calls","metric_value":1,"metric_resolution":"minute"}]}`, txID)
}

// startConsumer runs the worker's meter consumer (one goroutine, as REVOPS_METER_CONSUMERS
// defaults to) until the test ends.
func startConsumer(t *testing.T, st *store.Store, turned func(env string, b meters.Budget, rows int, more bool)) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&meters.Consumer{Store: st.OnJobsPool(), Consumers: 1, Every: 50 * time.Millisecond, Turned: turned}).Run(ctx)
	}()
	t.Cleanup(func() { stop(); <-done })
}

// pageWatch is the meter store of the test worker's MeterBackfill activity: it counts,
// per environment, the pages holding the environment at once (high-water mark), the
// pages that found it busy (meters.ErrBusy: waiting their turn on revops-jobs), and,
// while a page holds it, the database sessions waiting on a lock — a page waiting on
// another's lock would hold a connection (CONTRACT §21).
type pageWatch struct {
	meters.Store
	raw *gorm.DB

	mu        sync.Mutex
	holding   map[string]int
	high      map[string]int
	waits     []string // what the sessions waiting on a lock ran
	ran, busy atomic.Int64
	lockWaits atomic.Int64
	sampled   atomic.Int64 // samples taken: none means the lock check checked nothing
	// sampling: look for sessions waiting on a lock. Off while the test creates A's
	// meters: a creation is a request, which waits for the environment up to its lock
	// timeout by design (CONTRACT §21, 429 lock_timeout after it).
	sampling atomic.Bool
}

func newPageWatch(st meters.Store, raw *gorm.DB) *pageWatch {
	return &pageWatch{Store: st, raw: raw, holding: map[string]int{}, high: map[string]int{}}
}

func (w *pageWatch) InTx(ctx context.Context, env models.Env, fn func(mt *store.Tx) error) ([]models.Event, error) {
	envID, ran := env.ID, false
	_, err := w.Store.InTx(ctx, env, func(mt *store.Tx) error {
		// The page's own lock, taken first here to tell a page that ran from a busy one.
		if _, held, err := mt.LockUsageCursor(store.SkipBusy); err != nil || !held {
			return err
		}
		ran = true
		w.mu.Lock()
		w.holding[envID]++
		w.high[envID] = max(w.high[envID], w.holding[envID])
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			w.holding[envID]--
			w.mu.Unlock()
		}()
		err := fn(mt)
		var waiting []string
		if !w.sampling.Load() {
			return err
		}
		// A wait on usage or meters, or behind a session whose statement is on them (this
		// page's transaction is still open here): not B's delivery waiting a millisecond on
		// its own event row, between the attempt's record and the start's mark.
		if qerr := w.raw.WithContext(ctx).Raw(`SELECT l.locktype || ' ' || l.mode || ' ' || COALESCE(l.relation::regclass::text, '') || ': ' || a.query
			FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid AND NOT l.granted
			WHERE a.datname = current_database() AND (a.query ~* '(meter|usage)'
				OR EXISTS (SELECT 1 FROM pg_stat_activity b WHERE b.pid = ANY(pg_blocking_pids(a.pid)) AND b.query ~* '(meter|usage)'))`).Scan(&waiting).Error; qerr == nil {
			w.sampled.Add(1)
		}
		if len(waiting) > 0 {
			w.lockWaits.Add(int64(len(waiting)))
			w.mu.Lock()
			w.waits = append(w.waits, waiting...)
			w.mu.Unlock()
		}
		return err
	})
	switch {
	case err == nil && ran:
		w.ran.Add(1)
	case err == nil:
		w.busy.Add(1)
	}
	return nil, err
}

func (w *pageWatch) highWater(envID string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.high[envID]
}

// workersWithBackfill starts the stack's workers with the MeterBackfill activity on
// backfill's store.
func (s *stack) workersWithBackfill(c client.Client, backfill meters.Store) workflows.Workers {
	ws := workflows.NewWorkers(c, workflows.Activities{
		Delivery: s.acts, Retention: &activities.Retention{Store: s.db.Store},
		BulkReplay:    &activities.BulkReplay{Store: s.db.Store},
		MeterBackfill: &activities.MeterBackfill{Store: backfill},
		MeterPurge:    &activities.MeterPurge{Store: s.db.Store},
	}, 100, worker.Options{WorkerStopTimeout: 5 * time.Second})
	if err := ws.Start(); err != nil {
		s.t.Fatal(err)
	}
	return ws
}

// heavyDefinitions are 32 meters of A over meterstest's rows: every aggregation, with and
// without group_by, for any product or one.
func heavyDefinitions() []meters.Definition {
	var out []meters.Definition
	for i := 0; len(out) < meters.MaxMeters; i++ {
		agg := []string{models.AggSum, models.AggCount, models.AggMax, models.AggMin, models.AggLatest, models.AggUniqueCount}[i%6]
		d := meters.Definition{Key: fmt.Sprintf("a-%d", i), MetricName: meterstest.Metric, Aggregation: agg}
		if i%2 == 1 {
			d.GroupBy = []string{"region"}
		}
		if p := (i / 6) % 3; p > 0 {
			d.Product = []string{"api", "seats"}[p-1]
		}
		if agg == models.AggUniqueCount {
			d.ValueKey = "user"
		}
		out = append(out, d)
	}
	return out
}

// aHistoryBatches × 1,000 rows is A's history: two backfill pages of meters.BackfillRows
// per meter and a last one, some hundred pages of A in all, one at a time, against which
// B's one batch and one delivery are short.
const aHistoryBatches = 10

// CONTRACT §21 "Meter jobs": A, with a long usage history, creates 32 meters, so 32
// MeterBackfill runs page on revops-jobs at once. At most one page of A holds A at a
// time, the others found A busy and waited their turn (no session ever waited on a lock
// while a page ran); meanwhile B's webhook is delivered and recorded and B's as_of passes
// B's newest batch while A's backfills have not ended; in the end every meter of A is
// ready and equals meters.Reference over the raw rows.
func TestBackfillsOfOneEnvironmentNeverStallAnother(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	defer cancel()
	s := newStack(t)
	st, envB := s.db.Store, s.db.Env
	envA := heavyEnvs(t, st, envB)
	watch := newPageWatch(st, s.db.SQL())
	c := s.ts.GetDefaultClient()
	w := s.workersWithBackfill(c, watch)
	defer w.Stop()
	startConsumer(t, st, nil)
	backfills := &dispatch.Jobs{Client: c, Store: st}
	st.SetAfterCommit(dispatch.AfterCommit{Jobs: backfills})
	svc := &meters.Queries{Store: st}
	// A backfill's start comes detached after the meter's commit, and a failed one is the
	// worker's sweeper's, as in production: without it a start cut short under this
	// test's load would leave a meter backfilling until the hang guard.
	go backfills.RunSweeper(ctx, 500*time.Millisecond)

	now := time.Now().UTC()
	r := rand.New(rand.NewPCG(30, 1))
	for i := range aHistoryBatches {
		body, _ := meterstest.Batch(r, fmt.Sprintf("a-%d", i), 1000, now)
		ingest(ctx, t, st, envA, body)
	}
	bMeter, err := meterstest.Create(ctx, svc.Store, envB, meters.Definition{Key: "b-calls", MetricName: "calls", Aggregation: models.AggCount}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	waitReady(ctx, t, svc, envB, []string{bMeter.Key})

	var keysA []string
	for _, d := range heavyDefinitions() {
		// A's own backfills hold its usage cursor a page at a time: a create that waits
		// past the lock timeout is refused busy (429 at the edge, CONTRACT §21) and retried,
		// as a client would.
		m, err := meterstest.Create(ctx, svc.Store, envA, d, time.Now())
		for try := 1; try < 5 && errors.As(err, new(*apperr.BusyError)); try++ {
			m, err = meterstest.Create(ctx, svc.Store, envA, d, time.Now())
		}
		if err != nil || m.Status != models.MeterBackfilling {
			t.Fatalf("meter %s of A: %+v, %v", d.Key, m, err)
		}
		keysA = append(keysA, m.Key)
	}
	watch.sampling.Store(true)

	// B works while A's pages run: one batch, one change delivered to B's endpoint.
	ingest(ctx, t, st, envB, bBatch("b-1"))
	lastB := time.Now()
	evs := s.events(1)
	s.starter(c).Dispatch(ctx, evs)
	s.waitStatus(evs, models.EventDelivered, time.Minute)
	if got := s.rc.Received(); len(got) != 1 || got[0].Header.Get("webhook-id") != evs[0].ID {
		t.Fatalf("B's receiver got %d requests, want B's delivery", len(got))
	}
	meterstest.WaitAsOf(t, meterstest.ServiceValues(svc, envB), bMeter.Key, lastB, time.Minute)
	backfilling := countSQL(t, s.db.SQL(), `SELECT COUNT(*) FROM meters WHERE environment_id = ? AND status = ?`, envA.ID, models.MeterBackfilling)
	if backfilling == 0 {
		t.Fatalf("A's 32 backfills had all ended when B's delivery and as_of came: the test proves no order")
	}
	t.Logf("B delivered and counted with %d of A's meters still backfilling", backfilling)

	waitReady(ctx, t, svc, envA, keysA)
	if h := watch.highWater(envA.ID); h != 1 {
		t.Errorf("%d pages of A held A at once, want 1", h)
	}
	if watch.busy.Load() == 0 {
		t.Errorf("no page of A ever found A busy: the 32 backfills never contended, the test proves nothing")
	}
	if watch.sampled.Load() == 0 {
		t.Errorf("no lock sample taken while A's pages ran: the lock check checked nothing")
	}
	if n := watch.lockWaits.Load(); n != 0 {
		t.Errorf("%d sessions seen waiting on a lock while a page of A ran, want none; first: %s", n, watch.waits[0])
	}
	t.Logf("pages of A: %d ran, %d found A busy and waited their turn on revops-jobs", watch.ran.Load(), watch.busy.Load())

	rows, err := st.MeterRows(ctx, envA.ID, meterstest.Metric)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keysA {
		m, err := meters.Get(ctx, svc.Store, envA, k)
		if err != nil {
			t.Fatal(err)
		}
		meterstest.Check(t, meterstest.ServiceValues(svc, envA), m, rows, now, now)
	}
}

// waitReady waits until each meter of env is ready.
func waitReady(ctx context.Context, t *testing.T, svc *meters.Queries, env models.Env, keys []string) {
	t.Helper()
	for _, k := range keys {
		for {
			m, err := meters.Get(ctx, svc.Store, env, k)
			if err != nil {
				t.Fatal(err)
			}
			if m.Status == models.MeterReady {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("meter %s still %s", k, m.Status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// A's catch-up, scaled down from the 1,000 batches of 1 MiB to catchUpBatches of
// about 1 MiB (catchUpRows rows, each with catchUpBlob bytes of metadata no meter reads
// and a key "req" with a value of its own): the bound that matters is per turn, so a
// backlog of several turns proves the order as well as one of hundreds does.
const (
	catchUpBatches = 50
	catchUpRows    = 64
	catchUpBlob    = 15 << 10
)

// catchUpBatch is one of A's heavy batches: every row in its own "req" group.
func catchUpBatch(n int, now time.Time, blob string) []byte {
	var b []byte
	b = fmt.Appendf(b, `{"transaction_id":"heavy-%d","mode":"increment","event_metrics":[`, n)
	for i := range catchUpRows {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"account_id":"acct-%d","product":"api","metric_name":"calls","metric_value":%d,"metric_resolution":"minute",`+
			`"timestamp":%d,"metadata":{"req":"r-%d-%d","user":"u%d","blob":%q}}`,
			i%4, i+1, now.Add(-time.Duration(n*catchUpRows+i)*time.Second).Unix(), n, i, i%10, blob)
	}
	return append(b, "]}"...)
}

// catchUpTurns records what the consumer's turns did.
type catchUpTurns struct {
	mu         sync.Mutex
	aTurns     int
	overBudget []string
	// At the end of B's first turn (the consumer takes no other meanwhile): B's as_of and
	// A's batches still waiting.
	bAsOf     time.Time
	aWaiting  int64
	bTurnSeen bool
}

// CONTRACT §21 "The meter consumer": A has 32 meters grouped by a key with a value per row
// and a backlog of ~1 MiB batches ingested while the consumer was stopped; B ingests one
// batch; then the worker's consumer (one goroutine) starts. Every turn reads at most its
// budget's rows (rows × meters ÷ A's 32 meters), and B's turn comes — B's as_of passes
// its batch — while A's batches still wait: A's catch-up delays only A.
func TestCatchUpOfOneEnvironmentNeverStallsAnother(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	defer cancel()
	s := newStack(t)
	st, envB := s.db.Store, s.db.Env
	envA := heavyEnvs(t, st, envB)
	svc := &meters.Queries{Store: st}
	ready := func(env models.Env, d meters.Definition) models.Meter {
		m, err := meterstest.CreateReady(ctx, st, env, d) // no usage yet: one page makes it ready
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for i := range meters.MaxMeters {
		agg := []string{models.AggSum, models.AggCount, models.AggMax, models.AggMin, models.AggLatest, models.AggUniqueCount}[i%6]
		d := meters.Definition{Key: fmt.Sprintf("a-req-%d", i), MetricName: "calls", Aggregation: agg, GroupBy: []string{"req"}}
		if agg == models.AggUniqueCount {
			d.ValueKey = "user"
		}
		ready(envA, d)
	}
	bMeter := ready(envB, meters.Definition{Key: "b-calls", MetricName: "calls", Aggregation: models.AggCount})

	now := time.Now().UTC()
	blob := strings.Repeat("x", catchUpBlob)
	for n := range catchUpBatches {
		ingest(ctx, t, st, envA, catchUpBatch(n, now, blob))
	}
	ingest(ctx, t, st, envB, bBatch("b-1"))
	lastB := time.Now()

	var seen catchUpTurns
	startConsumer(t, st, func(env string, b meters.Budget, rows int, more bool) {
		seen.mu.Lock()
		defer seen.mu.Unlock()
		switch env {
		case envA.ID:
			seen.aTurns++
			if limit := max(1, b.RowMeters/meters.MaxMeters); rows > limit {
				seen.overBudget = append(seen.overBudget, fmt.Sprintf("%d rows on a budget of %d", rows, limit))
			}
		case envB.ID:
			if seen.bTurnSeen {
				return
			}
			seen.bTurnSeen = true
			page, err := svc.Values(ctx, envB, bMeter.Key, meters.ValuesQuery{From: now.Truncate(time.Hour),
				To: now.Truncate(time.Hour).Add(time.Hour), Window: meters.WindowHour, Limit: 1}, time.Now())
			if err != nil {
				t.Errorf("B's values: %v", err)
			}
			seen.bAsOf = page.AsOf
			if err := s.db.SQL().Raw(`SELECT COUNT(*) FROM usage_batches WHERE environment_id = ? AND gen IS NULL`, envA.ID).Scan(&seen.aWaiting).Error; err != nil {
				t.Errorf("A's waiting batches: %v", err)
			}
		}
	})
	meterstest.WaitAsOf(t, meterstest.ServiceValues(svc, envB), bMeter.Key, lastB, time.Minute)
	for countSQL(t, s.db.SQL(), `SELECT COUNT(*) FROM usage_batches WHERE environment_id = ? AND gen IS NULL`, envA.ID) > 0 {
		if ctx.Err() != nil {
			t.Fatal("A's catch-up did not end")
		}
		time.Sleep(100 * time.Millisecond)
	}

	seen.mu.Lock()
	defer seen.mu.Unlock()
	if !seen.bAsOf.After(lastB) {
		t.Errorf("after B's first turn B's as_of was %v, not past its batch %v", seen.bAsOf, lastB)
	}
	if seen.aWaiting == 0 {
		t.Errorf("A's catch-up had ended when B's turn came, want B served while A's batches wait")
	}
	if len(seen.overBudget) > 0 {
		t.Errorf("%d turns of A over their budget, first: %s", len(seen.overBudget), seen.overBudget[0])
	}
	if seen.aTurns < 2 {
		t.Errorf("A's catch-up took %d turns: the test proves no order", seen.aTurns)
	}
	t.Logf("B served after its first turn with %d of A's %d batches waiting; A caught up in %d turns", seen.aWaiting, catchUpBatches, seen.aTurns)
}
