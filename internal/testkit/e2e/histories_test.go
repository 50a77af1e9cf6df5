package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// recordEnv names the directory the recorder writes to, e.g.
// REVOPS_RECORD_HISTORIES=$PWD/workflows/testdata/histories/v2. Recording is a release
// step, not a test: the fixtures it writes are committed and replayed by
// workflows.TestReplayRecordedHistories with every later workflow code (CONTRACT §10).
const recordEnv = "REVOPS_RECORD_HISTORIES"

// TestRecordHistories records real WebhookDelivery histories of the code as it is: real
// Temporal server, real worker registration, real activities on PostgreSQL, a real HTTPS
// receiver. One history per scenario a deployed run can be in.
func TestRecordHistories(t *testing.T) {
	dir := os.Getenv(recordEnv)
	if dir == "" {
		t.Skip(recordEnv + " not set: nothing to record")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := newStack(t)
	faults := &faultyStore{Store: s.db.Store}
	s.acts.Store = faults
	w := s.worker()
	defer w.Stop()
	c := s.ts.GetDefaultClient()
	st := s.starter(c)
	ctx := context.Background()

	// The receiver's answer per event: fail the first n requests, then acknowledge.
	var mu sync.Mutex
	failFirst, seen := map[string]int{}, map[string]int{}
	s.rc.SetRespond(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		mu.Lock()
		seen[id]++
		fail := seen[id] <= failFirst[id]
		mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, webhooktest.AckSentence)
	})
	deliver := func(name string, failures int, wantStatus string) models.Event {
		t.Helper()
		ev := s.events(1)[0]
		mu.Lock()
		failFirst[ev.ID] = failures
		mu.Unlock()
		if err := st.Start(ctx, ev); err != nil {
			t.Fatalf("%s: start: %v", name, err)
		}
		ev = s.db.Load(t, ev.ID)
		s.record(c, dir, name, ev.WorkflowID, ev.RunID, wantStatus)
		return ev
	}

	deliver("delivered_first_attempt", 0, models.EventDelivered)
	deliver("retried_then_delivered", 2, models.EventDelivered)
	failed := deliver("failed_all_attempts", wire.MaxAttempts, models.EventFailed)

	// A manual replay of the failed event: a new run of the same workflow id, trigger
	// manual, which the receiver now acknowledges.
	marked, err := replay.Deliveries(ctx, s.db.Store, s.db.Env, failed.ID, "")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if err := st.Redispatch(ctx, marked); err != nil {
		t.Fatalf("redispatch: %v", err)
	}
	replayed := s.db.Load(t, failed.ID)
	if replayed.RunID == failed.RunID {
		t.Fatal("replay did not record a new run")
	}
	s.record(c, dir, "replayed_after_failure", replayed.WorkflowID, replayed.RunID, models.EventDelivered)

	// Since the "mark-failed-in-workflow" change: a success whose record failed is
	// recorded by the workflow.
	faults.set(failFor(4 * time.Second))
	deliver("delivered_record_failed", 0, models.EventDelivered)
	faults.set(nil)

	// Since the "fanout" change: two endpoints, each under its own policy; the second
	// never answers (2 attempts, 1 s apart), so the run ends Failed with the first
	// delivered.
	dead := webhooktest.NewReceiver(t)
	dead.SetRespond(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	if _, err := webhook.CreateEndpoint(ctx, s.db.Store, s.db.Env, models.WebhookEndpoint{
		URL: dead.URL + "/hooks", Method: "POST", Enabled: true, Secret: s.secret,
		RetryPolicy: models.RetryPolicy{InitialIntervalMS: 1000, BackoffCoefficient: 1, MaximumIntervalMS: 1000, MaximumAttempts: 2},
	}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	deliver("two_endpoints_one_failing", 0, models.EventFailed)
	if n := len(dead.Received()); n != 2 {
		t.Errorf("the failing endpoint got %d requests, want 2", n)
	}

	// Since the "recheck-replayed-while-settling" change: the failing endpoint's delivery
	// is marked failed, its bookkeeping activity is lost (as with a killed worker), and a
	// replay reaches the open run meanwhile; the retried mark leaves the replayed
	// delivery pending, and the run gives it a new series once the old one settled. The
	// receiver acknowledges the replay, so the run ends Completed.
	var deadOK sync.Once
	faults.holdNextMark(func(deliveryID string) error {
		deadOK.Do(func() {
			dead.SetRespond(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, webhooktest.AckSentence) })
		})
		d, err := s.db.Store.DeliveryForAttempt(ctx, deliveryID)
		if err != nil {
			return err
		}
		marked, err := replay.Deliveries(ctx, s.db.Store, s.db.Env, d.Event.ID, d.Delivery.EndpointID)
		if err != nil {
			return err
		}
		if err := st.Redispatch(ctx, marked); err != nil {
			return err
		}
		return errors.New("worker lost after the mark committed")
	})
	dead.SetRespond(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	deliver("replayed_while_settling", 0, models.EventDelivered)
	if n := len(dead.Received()); n != 5 {
		t.Errorf("the failing endpoint got %d requests in all, want 5 (2, 2, then the replay's 1)", n)
	}

	// Since MeterBackfill (CONTRACT §18): a backfill of several pages, and one whose meter
	// was deleted before its first page.
	s.recordMeterBackfills(c, dir)

	// Since paced endpoints (CONTRACT §27): a delivery to a paced endpoint, its attempt on
	// revops-webhooks-paced under the endpoint's fairness key, beside the unpaced ones.
	dead.SetRespond(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, webhooktest.AckSentence) })
	pacedRC := webhooktest.NewReceiver(t)
	if _, err := webhook.CreateEndpoint(ctx, s.db.Store, s.db.Env, models.WebhookEndpoint{
		URL: pacedRC.URL + "/hooks", Method: "POST", Enabled: true, Secret: s.secret, RateLimit: 5, RatePeriod: models.RatePerSecond,
	}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	deliver("paced_delivery", 0, models.EventDelivered)
	if n := len(pacedRC.Received()); n != 1 {
		t.Errorf("the paced endpoint got %d requests, want 1", n)
	}

	mu.Lock()
	defer mu.Unlock()
	if got := seen[failed.ID]; got != wire.MaxAttempts+1 {
		t.Errorf("failed then replayed event sent %d times, want %d", got, wire.MaxAttempts+1)
	}
}

// record waits for the run to close with the event in wantStatus, then writes its
// history as JSON (the format worker.WorkflowReplayer reads) to dir/name.json, after
// checking that no signing secret is in it.
func (s *stack) record(c client.Client, dir, name, workflowID, runID, wantStatus string) {
	t := s.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_ = c.GetWorkflow(ctx, workflowID, runID).Get(ctx, nil) // a failed run returns its error
	if ctx.Err() != nil {
		t.Fatalf("%s: run %s still open", name, runID)
	}
	ev, _, err := s.db.Store.EventByID(ctx, workflowID[len("webhook-"):])
	if err != nil || ev.Status != wantStatus {
		t.Fatalf("%s: event status %q (err %v), want %s", name, ev.Status, err, wantStatus)
	}
	writeHistory(t, dir, name, runHistory(t, c, workflowID, runID), s.secret)
}

// secretIn tells whether the history JSON holds the secret or any signing secret, in
// its text or in a payload (payload data is base64 in JSON).
func secretIn(js []byte, secret string) bool {
	texts := [][]byte{js}
	for _, m := range regexp.MustCompile(`"data":\s*"([^"]*)"`).FindAllSubmatch(js, -1) {
		if b, err := base64.StdEncoding.DecodeString(string(m[1])); err == nil {
			texts = append(texts, b)
		}
	}
	for _, text := range texts {
		if bytes.Contains(text, []byte(secret)) || bytes.Contains(text, []byte("whsec_")) {
			return true
		}
	}
	return false
}

// recordMeterBackfills records the MeterBackfill runs of two meters created after 15,000
// usage rows were taken by the consumer: meter_backfill counts them in three
// pages (meters.BackfillRows each) and a last one that finds none and makes the meter
// ready; meter_backfill_deleted is the run of a meter deleted before its first page,
// which ends successfully without retrying.
func (s *stack) recordMeterBackfills(c client.Client, dir string) {
	t := s.t
	t.Helper()
	ctx := context.Background()
	s.usageTaken(15) // 15,000 rows: three pages of meters.BackfillRows
	backfills := &dispatch.Jobs{Client: c, Store: s.db.Store}
	for _, sc := range []struct {
		name    string
		deleted bool
	}{{"meter_backfill", false}, {"meter_backfill_deleted", true}} {
		m, err := meterstest.Create(ctx, s.db.Store, s.db.Env, meters.Definition{Key: sc.name, MetricName: meterstest.Metric,
			Aggregation: models.AggSum, GroupBy: []string{"region"}}, time.Now())
		if err != nil || m.Status != models.MeterBackfilling {
			t.Fatalf("%s: meter %+v, %v", sc.name, m, err)
		}
		if sc.deleted {
			if _, err := meters.Delete(ctx, s.db.Store, s.db.Env, m.Key, idempotency.Reply[meters.Deleted]{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := backfills.Start(ctx, store.BackfillOf(m)); err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		wid := wire.MeterBackfillWorkflowID(m.ID)
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		var res wire.MeterBackfillResult
		err = c.GetWorkflow(wctx, wid, "").Get(wctx, &res)
		cancel()
		if err != nil || res.Deleted != sc.deleted || !sc.deleted && res.Pages != 4 {
			t.Fatalf("%s: result %+v, %v; want 4 pages, or deleted", sc.name, res, err)
		}
		writeHistory(t, dir, sc.name, runHistory(t, c, wid, ""), s.secret)
	}
}

// usageTaken ingests batches of 1,000 usage rows (meterstest.Batch) and has the meters'
// consumer take them, so that a meter created next has them to backfill.
func (s *stack) usageTaken(batches int) {
	t := s.t
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	r := rand.New(rand.NewPCG(7, 7))
	for n := range batches {
		body, _ := meterstest.Batch(r, fmt.Sprintf("taken-%d", n), 1000, now)
		if err := meterstest.Ingest(ctx, s.db.Store, s.db.Env, body, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := meterstest.Consume(ctx, s.db.Store); err != nil {
		t.Fatal(err)
	}
}
