package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/accounts"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/models"
)

// laneWorld is the property test's environment: accounts, an endpoint whose ordering
// the test switches, an unordered one, and the operations it draws.
type laneWorld struct {
	t        *testing.T
	ctx      context.Context
	db       seeded
	rng      *rand.Rand
	objects  []string
	ordered  models.WebhookEndpoint // switched on and off, disabled and enabled
	plain    models.WebhookEndpoint
	deleted  bool
	attempts int
	waited   int // waiting deliveries seen by the checks: the test exercised lanes
}

// The order lanes of CONTRACT §26 under random operations — changes of a few objects,
// attempt outcomes, failures marked, replays, disabling and re-enabling, ordering
// switched on and off, an endpoint's deletion — on both databases: at most one released
// unfinished delivery per lane; a lane of an enabled endpoint with unfinished deliveries
// always has a released one; an operation on one object never changes another object's
// lane; and once the receiver answers, everything drains.
func TestLanesProperty(t *testing.T) {
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
		for seed := range uint64(3) {
			w := newLaneWorld(t, ctx, db, seed)
			for step := range 120 {
				op := w.step()
				w.check(fmt.Sprintf("seed %d step %d (%s)", seed, step, op))
			}
			w.drain(fmt.Sprintf("seed %d drain", seed))
			if w.waited == 0 {
				t.Fatalf("seed %d: no delivery ever waited", seed)
			}
		}
	})
}

func newLaneWorld(t *testing.T, ctx context.Context, db seeded, seed uint64) *laneWorld {
	w := &laneWorld{t: t, ctx: ctx, db: db, rng: rand.New(rand.NewPCG(seed, 43))}
	w.ordered = newEndpoint(t, db, fmt.Sprintf("https://ordered-%d.example/h", seed), nil, true)
	w.plain = newEndpoint(t, db, fmt.Sprintf("https://plain-%d.example/h", seed), nil, true)
	exec(t, db, `UPDATE webhook_endpoints SET ordering = 'object' WHERE id = ?`, w.ordered.ID)
	for range 3 {
		w.objects = append(w.objects, newAccountEvent(t, db).ObjectID)
	}
	return w
}

// step draws one operation and runs it; it returns its name.
func (w *laneWorld) step() string {
	switch r := w.rng.IntN(100); {
	case r < 35:
		o := w.objects[w.rng.IntN(len(w.objects))]
		w.guarded(o, func() { w.change(o) })
		return "change " + o
	case r < 65:
		if d, ok := w.pickReleased(); ok {
			w.guarded(d.ObjectID, func() { w.attempt(d, w.rng.IntN(3)) })
			return "attempt " + d.ID
		}
	case r < 75:
		if d, ok := w.pickReleased(); ok {
			w.guarded(d.ObjectID, func() { w.markFailed(d) })
			return "mark failed " + d.ID
		}
	case r < 85:
		if d, ok := w.pick(func(d models.WebhookDelivery) bool {
			return webhook.Ends(d.Status) && (!w.deleted || d.EndpointID != w.ordered.ID)
		}); ok {
			w.guarded(d.ObjectID, func() { w.replay(d) })
			return "replay " + d.ID
		}
	case r < 89:
		if d, ok := w.pick(func(d models.WebhookDelivery) bool { return d.WaitingFor != "" }); ok {
			w.guarded(d.ObjectID, func() { w.expire(d) })
			return "expire " + d.ID
		}
	case r < 93:
		w.setEnabled(w.rng.IntN(2) == 0)
		return "enable/disable"
	case r < 98:
		ordering := models.OrderingNone
		if w.rng.IntN(2) == 0 {
			ordering = models.OrderingObject
		}
		exec(w.t, w.db, `UPDATE webhook_endpoints SET ordering = ? WHERE id = ?`, ordering, w.ordered.ID)
		return "ordering " + ordering
	default:
		if !w.deleted && w.rng.IntN(4) == 0 {
			w.deleteOrdered()
			return "delete"
		}
	}
	return "nothing"
}

func (w *laneWorld) change(o string) {
	name := "n" + uuid.NewString()[:8]
	if _, _, err := accounts.Update(w.ctx, w.db.st, w.db.env, o, accounts.Input{Name: bodyfields.Of(name)}, idempotency.Reply[accounts.Object]{}); err != nil {
		w.t.Fatal(err)
	}
}

// attempt records an attempt of a released delivery: delivered, failed for good, or
// failed to be retried.
func (w *laneWorld) attempt(d models.WebhookDelivery, outcome int) {
	w.attempts++
	a := models.DeliveryAttempt{ID: uuid.NewString(), EventID: d.EventID, DeliveryID: d.ID, RunID: "run", Number: w.attempts,
		Trigger: models.TriggerScheduled, StartedAt: time.Now().UTC(), Outcome: models.AttemptSucceeded}
	status := models.EventDelivered
	if outcome > 0 {
		a.Outcome, a.Error, status = models.AttemptFailed, "status 500", models.EventRetrying
		if outcome == 2 {
			status = models.EventFailed
		}
	}
	if err := webhook.RecordAttempt(w.ctx, w.db.st, w.db.env, &a, status, 0); err != nil {
		w.t.Fatal(err)
	}
}

func (w *laneWorld) markFailed(d models.WebhookDelivery) {
	if _, err := webhook.MarkDeliveryFailed(w.ctx, w.db.st, d.ID, "", &d.Replays, 0); err != nil {
		w.t.Fatal(err)
	}
}

func (w *laneWorld) replay(d models.WebhookDelivery) {
	_, err := replay.Deliveries(w.ctx, w.db.st, w.db.env, d.EventID, d.EndpointID)
	if err != nil && conflictCode(err) != replay.CodeDeliveryInProgress {
		w.t.Fatal(err)
	}
}

// expire makes waiting delivery d older than the limit and runs the minute check's lane
// sweeps, which end it (order_wait_expired) and leave its lane's order as it was.
func (w *laneWorld) expire(d models.WebhookDelivery) {
	now := time.Now().UTC()
	exec(w.t, w.db, `UPDATE webhook_deliveries SET updated_at = ? WHERE id = ?`, now.Add(-2*time.Hour), d.ID)
	res, err := webhook.CheckLanes(w.ctx, w.db.st, now, time.Hour, 100)
	if err != nil || res.Expired != 1 {
		w.t.Fatalf("expire %s: %+v %v", d.ID, res, err)
	}
}

func (w *laneWorld) setEnabled(on bool) {
	if w.deleted {
		return
	}
	_, err := webhook.UpdateEndpoint(w.ctx, w.db.st, w.db.env, w.ordered.ID, webhook.EndpointPatch{Enabled: &on}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		w.t.Fatal(err)
	}
}

func (w *laneWorld) deleteOrdered() {
	w.deleted = true
	if _, err := webhook.DeleteEndpoint(w.ctx, w.db.st, w.db.env, w.ordered.ID, idempotency.Reply[webhook.DeletedEndpoint]{}); err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.db.st.SkipDeletedEndpointPage(w.ctx, w.db.env.ID, w.ordered.ID, 10000,
		webhook.Transition(webhook.StatusChange{Change: webhook.SkippedByDeletion})); err != nil {
		w.t.Fatal(err)
	}
}

func (w *laneWorld) all() []models.WebhookDelivery {
	ds, err := w.db.st.DeliveriesForTest(w.ctx, w.db.env.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	return slices.DeleteFunc(ds, func(d models.WebhookDelivery) bool { // an earlier seed's
		return d.EndpointID != w.ordered.ID && d.EndpointID != w.plain.ID
	})
}

// pickReleased draws a delivery a run works on: unfinished and not waiting.
func (w *laneWorld) pickReleased() (models.WebhookDelivery, bool) {
	return w.pick(func(d models.WebhookDelivery) bool { return !webhook.Ends(d.Status) && d.WaitingFor == "" })
}

func (w *laneWorld) pick(ok func(models.WebhookDelivery) bool) (models.WebhookDelivery, bool) {
	ds := slices.DeleteFunc(w.all(), func(d models.WebhookDelivery) bool { return !ok(d) })
	if len(ds) == 0 {
		return models.WebhookDelivery{}, false
	}
	return ds[w.rng.IntN(len(ds))], true
}

// guarded runs op, which concerns object o only, and checks that no other object's
// deliveries changed.
func (w *laneWorld) guarded(o string, op func()) {
	before := w.othersOf(o)
	op()
	if after := w.othersOf(o); !slices.Equal(before, after) {
		w.t.Fatalf("an operation on %s changed another object's lane:\n%v\n%v", o, before, after)
	}
}

func (w *laneWorld) othersOf(o string) []string {
	var out []string
	for _, d := range w.all() {
		if d.ObjectID != o {
			out = append(out, d.ID+" "+d.Status+" "+d.WaitingFor+" "+d.UpdatedAt.String())
		}
	}
	return out
}

// check asserts the lanes' invariants.
func (w *laneWorld) check(at string) {
	released, waiting := map[string]int{}, map[string]int{}
	for _, d := range w.all() {
		if !d.Ordered || webhook.Ends(d.Status) {
			if d.WaitingFor != "" {
				w.t.Fatalf("%s: delivery %s (%s, ordered %v) waits", at, d.ID, d.Status, d.Ordered)
			}
			continue
		}
		lane := d.EndpointID + "/" + d.ObjectID
		if d.WaitingFor == "" {
			released[lane]++
		} else {
			if d.Status != models.EventPending {
				w.t.Fatalf("%s: waiting delivery %s is %s", at, d.ID, d.Status)
			}
			waiting[lane]++
			w.waited++
		}
	}
	enabled := w.enabled()
	for lane, n := range released {
		if n > 1 {
			w.t.Fatalf("%s: lane %s has %d released unfinished deliveries", at, lane, n)
		}
	}
	for lane := range waiting {
		if released[lane] == 0 && enabled {
			w.t.Fatalf("%s: lane %s waits with nothing released", at, lane)
		}
	}
}

func (w *laneWorld) enabled() bool {
	if w.deleted {
		return false
	}
	ep, err := w.db.st.WebhookEndpointByID(w.ctx, w.db.env, w.ordered.ID)
	if err != nil {
		w.t.Fatal(err)
	}
	return ep.Enabled
}

// drain enables the endpoint and delivers whatever runs can start until nothing is
// unfinished.
func (w *laneWorld) drain(at string) {
	w.setEnabled(true)
	for range 10000 {
		d, ok := w.pickReleased()
		if !ok {
			break
		}
		w.attempt(d, 0)
		w.check(at)
	}
	for _, d := range w.all() {
		if !webhook.Ends(d.Status) {
			w.t.Fatalf("%s: delivery %s is still %s (waiting for %q)", at, d.ID, d.Status, d.WaitingFor)
		}
	}
}

// The minute check's lane sweeps (CONTRACT §26): waits past the limit end failed
// (order_wait_expired) while the head still runs; a released delivery silent past its
// retry schedule ends failed (run_closed) and releases the next; a lane left with
// waiting deliveries and none released has its next released, its event marked for
// redispatch.
func TestLanesMinuteCheck(t *testing.T) {
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
		w := newLaneWorld(t, ctx, db, 7)
		o := w.objects[0]
		for range 3 {
			w.change(o)
		}
		lane := w.lane(o)
		if len(lane) != 4 || lane[0].WaitingFor != "" || lane[1].WaitingFor != lane[0].EventID || lane[3].WaitingFor != lane[2].EventID {
			t.Fatalf("lane after 4 events: %+v", lane)
		}
		now := time.Now().UTC()
		old := now.Add(-2 * time.Hour)
		exec(t, db, `UPDATE webhook_deliveries SET updated_at = ? WHERE id IN (?, ?)`, old, lane[1].ID, lane[2].ID)
		res, err := webhook.CheckLanes(ctx, db.st, now, time.Hour, 10)
		if err != nil || res.Expired != 2 || res.Closed != 0 || res.Released != 0 {
			t.Fatalf("check: %+v %v", res, err)
		}
		lane = w.lane(o)
		if lane[1].Status != models.EventFailed || lane[1].LastError != models.DeliveryOrderWaitExpired || lane[1].WaitingFor != "" ||
			lane[0].Status != models.EventPending || lane[0].WaitingFor != "" || lane[3].WaitingFor == "" {
			t.Fatalf("after the expiry: %+v", lane)
		}
		// The head's run closed: silent far past its schedule, its event reached.
		exec(t, db, `UPDATE events SET dispatched_at = ? WHERE id = ?`, old, lane[0].EventID)
		exec(t, db, `UPDATE webhook_deliveries SET updated_at = ? WHERE id = ?`, now.Add(-30*24*time.Hour), lane[0].ID)
		res, err = webhook.CheckLanes(ctx, db.st, now, 24*365*time.Hour, 10)
		if err != nil || res.Closed != 1 {
			t.Fatalf("check: %+v %v", res, err)
		}
		lane = w.lane(o)
		if lane[0].Status != models.EventFailed || lane[0].LastError != models.DeliveryRunClosed || lane[3].WaitingFor != "" {
			t.Fatalf("after the run closed: %+v", lane)
		}
		w.requireRedispatch(lane[3].EventID)
		// A lane left with nothing released (its head ended behind the check's back).
		w.change(o)
		exec(t, db, `UPDATE webhook_deliveries SET status = 'delivered' WHERE id = ?`, lane[3].ID)
		res, err = webhook.CheckLanes(ctx, db.st, now, 24*365*time.Hour, 10)
		if err != nil || res.Released != 1 {
			t.Fatalf("check: %+v %v", res, err)
		}
		lane = w.lane(o)
		if lane[4].WaitingFor != "" {
			t.Fatalf("stuck lane not released: %+v", lane)
		}
		w.requireRedispatch(lane[4].EventID)
	})
}

// lane is the ordered endpoint's lane of object o, by sequence.
func (w *laneWorld) lane(o string) []models.WebhookDelivery {
	return slices.DeleteFunc(w.all(), func(d models.WebhookDelivery) bool { return d.ObjectID != o || d.EndpointID != w.ordered.ID })
}

func (w *laneWorld) requireRedispatch(eventID string) {
	w.t.Helper()
	var n int64
	if err := w.db.st.CountForTest(w.ctx, "events", "redispatch_at IS NOT NULL AND id = ?", eventID, &n); err != nil || n != 1 {
		w.t.Fatalf("event %s not marked for redispatch (%v)", eventID, err)
	}
}
