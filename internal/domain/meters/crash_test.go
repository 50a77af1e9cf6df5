package meters_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// crashChildDB names the database the child consumer of TestConsumerSIGKILLedMidTransaction
// consumes; set only in that child's environment.
const crashChildDB = "REVOPS_METERS_CRASH_CHILD_DB"

// crashChildApp is the child's application_name, by which the parent finds its
// transaction in pg_stat_activity.
const crashChildApp = "revops-crash-child"

// crashChildHold is how long the child keeps each turn's transaction open after its
// writes, before the commit: most of the child's time is then spent mid-transaction, so
// the parent's SIGKILL lands there. Over a quarter and under half of the consumer's turn
// time, so the consumer neither grows nor shrinks the child's small budget for it.
const crashChildHold = 300 * time.Millisecond

// CONTRACT §21 "a crash resumes from the last commit without counting a row twice or
// missing one", on PostgreSQL. Environment A's batches wait for 18 meters (every
// aggregation, with and without group_by); a consumer in a child process (this test
// binary, re-executed) counts them on a budget of a few rows per turn, so that batches
// are applied in parts, and is SIGKILLed while one of its transactions has written
// figures and not committed, with some batches counted, some waiting and a batch half
// counted. Consumption then resumes in this process, and every value of every meter
// equals meters.Reference over the raw rows.
func TestConsumerSIGKILLedMidTransaction(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hang guard, not an assertion
	defer cancel()
	url := testdb.URL(t)
	st := testdb.Open(t, url)
	env := testdb.Seed(t, st, "live")
	svc := &meters.Queries{Store: st}
	defs := definitions()
	for _, d := range defs {
		if _, err := meterstest.CreateReady(ctx, st, env, d); err != nil { // no usage yet: one page makes it ready
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	r := rand.New(rand.NewPCG(30, 9))
	const batches = 30
	for b := range batches {
		if err := meterstest.Ingest(ctx, st, env, randomBatch(r, fmt.Sprintf("crash-%d", b), now), now); err != nil {
			t.Fatal(err)
		}
	}

	raw := testdb.Raw(t, "postgres", url)
	child, out := startCrashChild(t, url)
	waitMidTransaction(ctx, t, raw, env.ID, out)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	waitBackendGone(ctx, t, raw)
	stamped := countBatches(t, raw, env.ID, "gen IS NOT NULL")
	t.Logf("child killed with %d of %d batches counted", stamped, batches)

	if _, err := meterstest.Consume(ctx, st); err != nil {
		t.Fatalf("resuming after the kill: %v", err)
	}
	if n := countBatches(t, raw, env.ID, "gen IS NULL"); n != 0 {
		t.Fatalf("%d batches still waiting after the resumed consumer", n)
	}
	rows, err := st.MeterRows(ctx, env.ID, "calls")
	if err != nil {
		t.Fatal(err)
	}
	meterstest.PageLimit = 50
	for _, d := range defs {
		m, err := meters.Get(ctx, svc.Store, env, d.Key)
		if err != nil {
			t.Fatal(err)
		}
		meterstest.Check(t, meterstest.ServiceValues(svc, env), m, rows, now, time.Now().Add(-time.Second))
	}
}

// startCrashChild runs the child consumer on the database at url.
func startCrashChild(t *testing.T, url string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChildConsumer$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildDB+"="+url+"&application_name="+crashChildApp)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, &out
}

// waitMidTransaction waits until the child is inside a turn that has written and not
// committed (its backend has a transaction id), while some of env's batches are counted,
// some wait, and the committed cursor is within a batch applied in parts.
func waitMidTransaction(ctx context.Context, t *testing.T, raw *gorm.DB, envID string, out *bytes.Buffer) {
	t.Helper()
	for ctx.Err() == nil {
		var c struct {
			Writing, Stamped, Waiting, PartSeq int64
		}
		if err := raw.WithContext(ctx).Raw(`SELECT
			(SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = ? AND backend_xid IS NOT NULL) AS writing,
			(SELECT COUNT(*) FROM usage_batches WHERE environment_id = ? AND gen IS NOT NULL) AS stamped,
			(SELECT COUNT(*) FROM usage_batches WHERE environment_id = ? AND gen IS NULL) AS waiting,
			(SELECT COALESCE(MAX(part_seq), 0) FROM usage_cursors WHERE environment_id = ?) AS part_seq`,
			crashChildApp, envID, envID, envID).Scan(&c).Error; err != nil {
			t.Fatal(err)
		}
		if c.Waiting == 0 {
			t.Fatalf("the child counted every batch before it could be killed mid-way; its output:\n%s", out)
		}
		if c.Writing > 0 && c.Stamped >= 3 && c.PartSeq != 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the child never was mid-transaction; its output:\n%s", out)
}

// waitBackendGone waits until PostgreSQL has noticed the killed child's connections and
// rolled back its transaction: until then the environment is held, and a consumer
// (SKIP LOCKED) leaves it to its holder.
func waitBackendGone(ctx context.Context, t *testing.T, raw *gorm.DB) {
	t.Helper()
	for ctx.Err() == nil {
		var n int64
		if err := raw.WithContext(ctx).Raw(`SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = ?`, crashChildApp).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the killed child's connections stayed open")
}

func countBatches(t *testing.T, raw *gorm.DB, envID, cond string) int64 {
	t.Helper()
	var n int64
	if err := raw.Raw(`SELECT COUNT(*) FROM usage_batches WHERE environment_id = ? AND `+cond, envID).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCrashChildConsumer is the child process of TestConsumerSIGKILLedMidTransaction (it
// skips unless run as one): the worker's meter consumer on a budget of a few rows per
// turn, each turn holding its transaction open a while after its writes, until killed.
func TestCrashChildConsumer(t *testing.T) {
	url := os.Getenv(crashChildDB)
	if url == "" {
		t.Skip("the child process of TestConsumerSIGKILLedMidTransaction")
	}
	ctx := context.Background()
	st, err := store.Open(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 100 row-meters for 18 meters: 5 rows a turn, so most batches are applied in parts.
	meters.DefaultBudget = meters.Budget{RowMeters: 100, Bytes: 4 << 10}
	(&meters.Consumer{Store: holdingStore{st.OnJobsPool()}, Consumers: 1, Every: 20 * time.Millisecond}).Run(ctx)
}

// holdingStore keeps each meter transaction open crashChildHold after its work.
type holdingStore struct{ *store.Store }

func (h holdingStore) InTx(ctx context.Context, env models.Env, fn func(mt *store.Tx) error) ([]models.Event, error) {
	return h.Store.InTx(ctx, env, func(mt *store.Tx) error {
		if err := fn(mt); err != nil {
			return err
		}
		time.Sleep(crashChildHold)
		return nil
	})
}
