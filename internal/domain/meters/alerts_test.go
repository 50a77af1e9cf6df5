package meters_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/clocktest"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// ingestCalls sends one batch of "calls" metrics, one per (account, timestamp) given.
func ingestCalls(t *testing.T, db testdb.Seeded, txID string, accounts []string, at time.Time) {
	t.Helper()
	metrics := make([]map[string]any, len(accounts))
	for i, a := range accounts {
		metrics[i] = map[string]any{"account_id": a, "product": "api", "metric_name": "calls", "metric_value": 1,
			"metric_resolution": "minute", "timestamp": at.Unix()}
	}
	body, _ := json.Marshal(map[string]any{"transaction_id": txID, "mode": "increment", "event_metrics": metrics})
	if err := meterstest.Ingest(context.Background(), db.Store, db.Env, body, time.Now()); err != nil {
		t.Fatal(err)
	}
}

// countMeter creates a count meter of "calls".
func countMeter(t *testing.T, db testdb.Seeded) models.Meter {
	t.Helper()
	m, err := meters.Create(context.Background(), db.Store, db.Env,
		meters.Definition{Key: "calls", MetricName: "calls", Aggregation: models.AggCount}, time.Now(), idempotency.Reply[meters.Object]{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// turn runs one consumer step of the environment within the cap alertEvents.
func turn(t *testing.T, db testdb.Seeded, alertEvents int) {
	t.Helper()
	b := meters.DefaultBudget
	b.AlertEvents = alertEvents
	if ran, _, more, err := meters.Turn(context.Background(), db.Store, db.Env.ID, b); err != nil || !ran || more {
		t.Fatalf("turn: ran %v, more %v, %v", ran, more, err)
	}
}

// eventsOf reads the meter-threshold-crossed bodies of alert a, oldest first.
func eventsOf(t *testing.T, db testdb.Seeded, a models.MeterAlert) []catalog.ThresholdCrossed {
	t.Helper()
	evs, err := db.Store.EventsForObject(context.Background(), db.Env, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []catalog.ThresholdCrossed
	for _, ev := range evs {
		var body struct {
			MeterAlert catalog.ThresholdCrossed `json:"meter_alert"`
		}
		if err := json.Unmarshal([]byte(ev.Payload), &body); err != nil {
			t.Fatal(err)
		}
		out = append(out, body.MeterAlert)
	}
	return out
}

// firingsOf lists the firings of alert a.
func firingsOf(t *testing.T, db testdb.Seeded, a models.MeterAlert) []models.MeterAlertFiring {
	t.Helper()
	all, err := db.Store.MeterAlertFirings(context.Background(), db.Env.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []models.MeterAlertFiring
	for _, f := range all {
		if f.AlertID == a.ID {
			out = append(out, f)
		}
	}
	return out
}

// CONTRACT §24: one transaction crossing 1,000 series sends one event per alert, listing
// 100 crossings and counting the other 900; every firing is recorded.
func TestThousandSeriesOneEventPerAlert(t *testing.T) {
	testdb.ForBoth(t, "live", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		m := countMeter(t, db)
		created := time.Now().Add(-time.Hour)
		a := putAlert(t, db.Store, db.Env, m, "day", "1", "", "{}", created)
		b := putAlert(t, db.Store, db.Env, m, "month", "1", "", "{}", created)
		accounts := make([]string, 1000)
		for i := range accounts {
			accounts[i] = fmt.Sprintf("acct_%04d", i)
		}
		ingestCalls(t, db, "wide", accounts, time.Now())
		turn(t, db, 0)
		for _, al := range []models.MeterAlert{a, b} {
			evs := eventsOf(t, db, al)
			if len(evs) != 1 || len(evs[0].Crossings) != 100 || evs[0].More != 900 || evs[0].Window != al.Window {
				t.Fatalf("alert %s: events %+v", al.Window, evs)
			}
			if c := evs[0].Crossings[0]; c.AccountID != "acct_0000" || c.Value != "1" || len(c.Group) != 0 {
				t.Errorf("first crossing %+v", c)
			}
			if n := len(firingsOf(t, db, al)); n != 1000 {
				t.Errorf("alert %s: %d firings", al.Window, n)
			}
		}
	})
}

// CONTRACT §24: past REVOPS_ALERT_EVENTS_PER_HOUR events in an environment, firings are
// recorded without an event, and the next event sent counts them in held_back.
func TestAlertEventsHeldBackPastTheCap(t *testing.T) {
	testdb.ForBoth(t, "live", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		// The cap counts per clock hour: its three turns must fall in one.
		clocktest.AwayFromBoundary(t, time.Hour, 30*time.Second, 0)
		m := countMeter(t, db)
		created := time.Now().Add(-time.Hour)
		var alerts []models.MeterAlert
		for range 4 {
			alerts = append(alerts, putAlert(t, db.Store, db.Env, m, "day", "1", "", "{}", created))
		}
		ingestCalls(t, db, "first", []string{"a", "b", "c"}, time.Now())
		turn(t, db, 2) // 4 alerts fire, 2 events sent: 2 alerts × 3 series held back
		sent, held := 0, 0
		for _, a := range alerts {
			fs := firingsOf(t, db, a)
			if len(fs) != 3 {
				t.Fatalf("alert %s: %d firings", a.ID, len(fs))
			}
			switch evs := eventsOf(t, db, a); {
			case len(evs) == 1 && fs[0].EventID != "":
				sent++
			case len(evs) == 0 && fs[0].EventID == "":
				held++
			default:
				t.Fatalf("alert %s: events %+v, firings %+v", a.ID, evs, fs)
			}
		}
		if sent != 2 || held != 2 {
			t.Fatalf("%d alerts sent, %d held back; want 2 and 2", sent, held)
		}
		// Still within the hour, cap 2: nothing more is sent.
		ingestCalls(t, db, "second", []string{"d"}, time.Now())
		turn(t, db, 2)
		total := 0
		for _, a := range alerts {
			total += len(eventsOf(t, db, a))
		}
		if total != 2 {
			t.Fatalf("%d events past a cap of 2", total)
		}
		// A larger cap: the next event counts the 2 × 3 + 4 firings held back.
		ingestCalls(t, db, "third", []string{"e"}, time.Now())
		turn(t, db, 3)
		var next []catalog.ThresholdCrossed
		for _, a := range alerts {
			if evs := eventsOf(t, db, a); len(evs) > 0 && evs[len(evs)-1].Crossings[0].AccountID == "e" {
				next = append(next, evs[len(evs)-1])
			}
		}
		if len(next) != 1 || next[0].HeldBack != 10 {
			t.Fatalf("events after the cap was raised: %+v", next)
		}
		// The count is per clock hour: once the hour has turned (the recorded hour
		// moved back one), a cap of 3 sends 3 events again.
		if _, err := db.Store.InTx(context.Background(), db.Env, func(mt *store.Tx) error {
			if _, _, err := mt.LockUsageCursor(store.Wait); err != nil {
				return err
			}
			c, err := mt.AlertCap()
			if err != nil || c.Sent != 3 || c.HeldBack != 3 {
				return fmt.Errorf("cap %+v, %v; want 3 sent, 3 held back", c, err)
			}
			c.HourStart = c.HourStart.Add(-time.Hour)
			return mt.SaveAlertCap(c)
		}); err != nil {
			t.Fatal(err)
		}
		ingestCalls(t, db, "next-hour", []string{"f"}, time.Now())
		turn(t, db, 3)
		var heldBack []int
		for _, a := range alerts {
			if evs := eventsOf(t, db, a); len(evs) > 0 && evs[len(evs)-1].Crossings[0].AccountID == "f" {
				heldBack = append(heldBack, evs[len(evs)-1].HeldBack)
			}
		}
		if len(heldBack) != 3 || heldBack[0]+heldBack[1]+heldBack[2] != 3 {
			t.Fatalf("events of the next hour, held_back %v: want 3 events reporting the 3 held back", heldBack)
		}
	})
}

// CONTRACT §24: windows that ended before the alert was created never fire; an alert
// created while a series is already over fires with the next figures written for it.
func TestAlertWindowsAndLateAlerts(t *testing.T) {
	testdb.ForBoth(t, "live", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		m := countMeter(t, db)
		now := time.Now().UTC()
		old := now.AddDate(0, 0, -3)
		ingestCalls(t, db, "old", []string{"a", "a", "a"}, old)
		ingestCalls(t, db, "today", []string{"a", "a", "a"}, now)
		if _, err := meterstest.Consume(ctx, db.Store); err != nil {
			t.Fatal(err)
		}
		a := putAlert(t, db.Store, db.Env, m, "day", "2", "", "{}", now)
		if fs := firingsOf(t, db, a); len(fs) != 0 {
			t.Fatalf("fired before any figure was written since: %+v", fs)
		}
		// Late usage for the old day and more for today: the old day ended before the
		// alert existed, today's series was over already and fires now.
		ingestCalls(t, db, "more", []string{"a"}, old)
		ingestCalls(t, db, "more-today", []string{"a"}, now)
		if _, err := meterstest.Consume(ctx, db.Store); err != nil {
			t.Fatal(err)
		}
		fs := firingsOf(t, db, a)
		if len(fs) != 1 || !fs[0].WindowStart.Equal(now.Truncate(24*time.Hour)) || fs[0].Value != "4" {
			t.Fatalf("firings %+v", fs)
		}
		if !fs[0].WindowEnd.Equal(fs[0].WindowStart.AddDate(0, 0, 1)) || fs[0].AsOf.Before(now.Add(-time.Minute)) {
			t.Errorf("firing window or as_of: %+v", fs[0])
		}
		// Written again, the same series and window never fires twice.
		ingestCalls(t, db, "again", []string{"a"}, now)
		if _, err := meterstest.Consume(ctx, db.Store); err != nil {
			t.Fatal(err)
		}
		if fs := firingsOf(t, db, a); len(fs) != 1 {
			t.Fatalf("firings %+v", fs)
		}
		if evs := eventsOf(t, db, a); len(evs) != 1 || evs[0].Crossings[0].Value != "4" {
			t.Fatalf("events %+v", evs)
		}
	})
}

// CONTRACT §24: a backfill's transactions fire the alerts of the meter they count.
func TestBackfillFiresAlerts(t *testing.T) {
	testdb.ForBoth(t, "live", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		now := time.Now().UTC()
		for i := range 5 {
			ingestCalls(t, db, fmt.Sprint("b", i), []string{"a", "b"}, now)
		}
		if _, err := meterstest.Consume(ctx, db.Store); err != nil { // taken by no meter: the backfill's
			t.Fatal(err)
		}
		m := countMeter(t, db)
		if m.Status != models.MeterBackfilling {
			t.Fatalf("meter %s", m.Status)
		}
		a := putAlert(t, db.Store, db.Env, m, "month", "3", "a", "{}", now.Add(-time.Minute))
		if _, err := meterstest.Consume(ctx, db.Store); err != nil {
			t.Fatal(err)
		}
		if fs := firingsOf(t, db, a); len(fs) != 0 {
			t.Fatalf("fired before the backfill counted anything: %+v", fs)
		}
		pages := 0
		for done := false; !done; pages++ {
			var err error
			if done, _, err = meters.BackfillPageWithin(ctx, db.Store, m.ID, time.Now(), meters.Budget{RowMeters: 2, Bytes: 1 << 20}); err != nil {
				t.Fatal(err)
			}
		}
		fs := firingsOf(t, db, a)
		if len(fs) != 1 || fs[0].AccountID != "a" || fs[0].Value != "3" || fs[0].EventID == "" {
			t.Fatalf("after %d pages, firings %+v", pages, fs)
		}
		if evs := eventsOf(t, db, a); len(evs) != 1 || evs[0].Crossings[0].Value != "3" {
			t.Fatalf("events %+v", evs)
		}
	})
}

// CONTRACT §24: deleting a meter deletes its alerts at once and its firings with its
// figures (the purge).
func TestDeletedMeterTakesItsAlerts(t *testing.T) {
	testdb.ForBoth(t, "live", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		m := countMeter(t, db)
		a := putAlert(t, db.Store, db.Env, m, "day", "1", "", "{}", time.Now().Add(-time.Hour))
		ingestCalls(t, db, "x", []string{"a"}, time.Now())
		if _, err := meterstest.Consume(ctx, db.Store); err != nil {
			t.Fatal(err)
		}
		if len(firingsOf(t, db, a)) != 1 {
			t.Fatal("no firing")
		}
		svc := &meters.Queries{Store: db.Store}
		if _, err := meters.Delete(ctx, svc.Store, db.Env, m.Key, idempotency.Reply[meters.Deleted]{}); err != nil {
			t.Fatal(err)
		}
		if left := alertsLeft(t, db); left != 0 {
			t.Fatalf("%d alerts left", left)
		}
		for {
			n, err := db.Store.PurgeMeterPage(ctx, m.ID, meters.PurgeRows)
			if err != nil {
				t.Fatal(err)
			}
			if n < meters.PurgeRows {
				break
			}
		}
		if fs := firingsOf(t, db, a); len(fs) != 0 {
			t.Fatalf("firings left after the purge: %+v", fs)
		}
	})
}

// alertsLeft counts the environment's alerts, as the meter transaction reads them.
func alertsLeft(t *testing.T, db testdb.Seeded) int {
	t.Helper()
	n := 0
	if _, err := db.Store.InTx(context.Background(), db.Env, func(mt *store.Tx) error {
		if _, _, err := mt.LockUsageCursor(store.Wait); err != nil {
			return err
		}
		as, err := mt.MeterAlerts()
		n = len(as)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return n
}
