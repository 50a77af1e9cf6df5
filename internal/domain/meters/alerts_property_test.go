package meters_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// alertBatch is a usage batch whose values only grow its meters' figures (positive
// values, increments): a series reaches a threshold at some transaction exactly when its
// final value does, which the raw rows tell.
func alertBatch(r *rand.Rand, txID string, now time.Time) []byte {
	n := 1 + r.IntN(25)
	metrics := make([]map[string]any, n)
	for i := range metrics {
		ts := now.Add(-time.Duration(r.IntN(34*24*3600)) * time.Second) // two months
		if r.IntN(2) == 0 {
			ts = now.Add(-time.Duration(r.IntN(36*3600)) * time.Second)
		}
		meta := map[string]any{"user": fmt.Sprintf("u%d", r.IntN(30))}
		if r.IntN(5) > 0 {
			meta["region"] = []string{"eu", "us"}[r.IntN(2)]
		}
		metrics[i] = map[string]any{
			"account_id": fmt.Sprintf("acct_%d", r.IntN(4)), "product": "api",
			"metric_name":       []string{"calls", "calls", "other"}[r.IntN(3)],
			"metric_value":      json.RawMessage(fmt.Sprintf("%d.%d", r.IntN(100), r.IntN(10))),
			"metric_resolution": "minute", "metadata": meta, "timestamp": ts.Unix(),
		}
	}
	b, _ := json.Marshal(map[string]any{"transaction_id": txID, "mode": "increment", "event_metrics": metrics})
	return b
}

// putAlert stores an alert of m as the API would have created it at created.
func putAlert(t *testing.T, st *store.Store, env models.Env, m models.Meter, window, threshold, account, group string, created time.Time) models.MeterAlert {
	t.Helper()
	a := models.MeterAlert{ID: uuid.NewString(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID, MeterID: m.ID,
		Threshold: threshold, Window: window, AccountID: account, Group: group, CreatedAt: created}
	if err := st.PutMeterAlert(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

// firingKey names a firing in the tests: alert, account, group key, window start.
type firingKey struct {
	alert, account, groups string
	start                  int64
}

func (k firingKey) String() string {
	return fmt.Sprintf("%s/%s/%s/%s", k.alert[:8], k.account, k.groups, time.Unix(0, k.start).UTC().Format(time.DateOnly))
}

// expectedFirings are the firings the raw rows call for: every (alert, series, window)
// whose final value reaches the threshold, its window ending after the alert's creation.
// below counts the watched ones that stay under.
func expectedFirings(t *testing.T, m models.Meter, alerts []models.MeterAlert, rows []store.UsageRow, from, to time.Time) (out map[firingKey]string, below int) {
	t.Helper()
	fire, below, err := meters.ReferenceFirings(m, alerts, rows, from, to)
	if err != nil {
		t.Fatal(err)
	}
	out = map[firingKey]string{}
	for _, f := range fire {
		out[firingKey{f.Alert.ID, f.Value.AccountID, meters.GroupsText(f.GroupValues), f.Value.WindowStart.UnixNano()}] = f.Value.Value
	}
	return out, below
}

// crossedBodies reads the meter-threshold-crossed events of each alert.
func crossedBodies(t *testing.T, st *store.Store, env models.Env, alerts []models.MeterAlert) map[string][]catalog.ThresholdCrossed {
	t.Helper()
	out := map[string][]catalog.ThresholdCrossed{}
	for _, a := range alerts {
		evs, err := st.EventsForObject(context.Background(), env, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Type != catalog.MeterThresholdCrossed || ev.ObjectType != "meter_alert" {
				t.Fatalf("event %s of alert %s: %s on %s", ev.ID, a.ID, ev.Type, ev.ObjectType)
			}
			var body struct {
				Event      struct{ ID string }      `json:"event"`
				MeterAlert catalog.ThresholdCrossed `json:"meter_alert"`
			}
			if err := json.Unmarshal([]byte(ev.Payload), &body); err != nil || body.Event.ID != ev.ID {
				t.Fatalf("event %s body %s: %v", ev.ID, ev.Payload, err)
			}
			out[ev.ID] = append(out[ev.ID], body.MeterAlert)
		}
	}
	return out
}

// TestAlertsFireOncePerCrossing is the property of CONTRACT §24: concurrent clients send
// random batches (some transaction ids sent by several of them) while two worker
// processes consume, and a meter created afterwards is backfilled; every (alert, series,
// window) whose value reaches the threshold has exactly one firing, with a value at or
// over it and at most the final one, none other has any, and the events list exactly
// the firings, each in the event its firing names.
func TestAlertsFireOncePerCrossing(t *testing.T) {
	testdb.ForBoth(t, "live", func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		st, env := db.Store, db.Env
		svc := &meters.Queries{Store: st}
		now := time.Now().UTC()
		create := func(d meters.Definition) models.Meter {
			m, err := meterstest.Create(ctx, svc.Store, env, d, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		long := now.AddDate(0, -4, 0) // before every window: all may fire
		type spec struct {
			window, threshold, account, group string
		}
		var alerts []models.MeterAlert
		watch := func(m models.Meter, specs ...spec) {
			for _, s := range specs {
				alerts = append(alerts, putAlert(t, st, env, m, s.window, s.threshold, s.account, s.group, long))
			}
		}
		sum := create(meters.Definition{Key: "sum", MetricName: "calls", Aggregation: models.AggSum, GroupBy: []string{"region"}})
		watch(sum, spec{"day", "150", "", "{}"}, spec{"day", "400.5", "acct_1", "{}"}, spec{"month", "1500", "", `{"region":"eu"}`},
			spec{"month", "900", "", "{}"}, spec{"day", "250", "", `{"region":"us"}`})
		count := create(meters.Definition{Key: "count", MetricName: "calls", Aggregation: models.AggCount})
		watch(count, spec{"day", "4", "", "{}"}, spec{"month", "40", "", "{}"}, spec{"month", "25", "acct_2", "{}"})
		maxM := create(meters.Definition{Key: "max", MetricName: "calls", Aggregation: models.AggMax, GroupBy: []string{"region"}})
		watch(maxM, spec{"day", "95", "", "{}"}, spec{"month", "99.5", "", `{"region":"eu"}`})
		uniq := create(meters.Definition{Key: "users", MetricName: "calls", Aggregation: models.AggUniqueCount, ValueKey: "user"})
		watch(uniq, spec{"day", "3", "", "{}"}, spec{"month", "20", "", "{}"}, spec{"month", "12", "acct_0", "{}"})

		stopConsumers := inTurns(t, []*store.Store{st, testdb.Open(t, db.URL)}, func(i int, cst *store.Store) (func() error, time.Duration) {
			return func() error { _, err := meterstest.Consume(ctx, cst); return err }, time.Duration(2+3*i) * time.Millisecond
		})
		const clients, batches = 4, 30
		together(clients, func(c int) {
			r := rand.New(rand.NewPCG(uint64(c), 33))
			for b := range batches {
				txID := fmt.Sprintf("tx-%d-%d", c, b)
				body := alertBatch(r, txID, now)
				if b%4 == 0 { // the same transaction from every client: counted once
					txID = fmt.Sprintf("shared-%d", b)
					body = alertBatch(rand.New(rand.NewPCG(uint64(b), 1)), txID, now)
				}
				if err := meterstest.Ingest(ctx, st, env, body, now); err != nil {
					t.Errorf("ingest %s: %v", txID, err)
				}
			}
		})
		stopConsumers()
		if _, err := meterstest.Consume(ctx, st); err != nil {
			t.Fatal(err)
		}
		// A meter created now counts every row through its backfill: its alerts fire
		// from the backfill's transactions.
		late := create(meters.Definition{Key: "late", MetricName: "calls", Aggregation: models.AggSum})
		watch(late, spec{"day", "200", "", "{}"}, spec{"month", "1200", "acct_3", "{}"})
		for done := false; !done; {
			var err error
			if done, _, err = meters.BackfillPageWithin(ctx, st, late.ID, time.Now(), meters.Budget{RowMeters: 40, Bytes: 1 << 20}); err != nil {
				t.Fatal(err)
			}
		}

		rows, err := st.MeterRows(ctx, env.ID, "calls")
		if err != nil {
			t.Fatal(err)
		}
		want, below := map[firingKey]string{}, 0
		for _, m := range []models.Meter{sum, count, maxM, uniq, late} {
			exp, n := expectedFirings(t, m, alerts, rows, now.AddDate(0, -6, 0), now.AddDate(0, 1, 0))
			for k, v := range exp {
				want[k] = v
			}
			below += n
		}
		fired, err := st.MeterAlertFirings(ctx, env.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := map[firingKey]models.MeterAlertFiring{}
		for _, f := range fired {
			k := firingKey{f.AlertID, f.AccountID, f.Groups, f.WindowStart.UTC().UnixNano()}
			got[k] = f
			final, ok := want[k]
			if !ok {
				t.Errorf("firing %s: no series reaches the threshold there", k)
				continue
			}
			v, _ := decimal.ParseStored(f.Value)
			fin, _ := decimal.ParseStored(final)
			var a models.MeterAlert
			for _, x := range alerts {
				if x.ID == f.AlertID {
					a = x
				}
			}
			th, _ := decimal.ParseStored(a.Threshold)
			if v.Cmp(&th) < 0 || v.Cmp(&fin) > 0 {
				t.Errorf("firing %s: value %s, threshold %s, final %s", k, f.Value, a.Threshold, final)
			}
			if f.EventID == "" {
				t.Errorf("firing %s held back under the default cap", k)
			}
		}
		for k := range want {
			if _, ok := got[k]; !ok {
				t.Errorf("no firing %s (final value %s)", k, want[k])
			}
		}
		if len(want) < 20 || below < 20 {
			t.Fatalf("%d firings expected, %d watched windows under: the thresholds prove little", len(want), below)
		}

		// The events list exactly the firings, each in the event the firing names.
		listed := map[firingKey]string{}
		for id, bodies := range crossedBodies(t, st, env, alerts) {
			for _, b := range bodies {
				if b.More != 0 || b.HeldBack != 0 {
					t.Errorf("event %s: more %d, held_back %d", id, b.More, b.HeldBack)
				}
				for _, c := range b.Crossings {
					start, _ := time.Parse(time.RFC3339Nano, c.WindowStart)
					var m models.Meter
					for _, x := range []models.Meter{sum, count, maxM, uniq, late} {
						if x.ID == b.MeterID {
							m = x
						}
					}
					gv := make([]*string, len(m.GroupBy))
					for i, k := range m.GroupBy {
						gv[i] = c.Group[k]
					}
					k := firingKey{b.AlertID, c.AccountID, meters.GroupsText(gv), start.UnixNano()}
					if _, dup := listed[k]; dup {
						t.Errorf("%s listed twice", k)
					}
					listed[k] = id
					if f, ok := got[k]; !ok || f.EventID != id || string(c.Value) != f.Value {
						t.Errorf("event %s lists %s (value %s): firing %+v", id, k, c.Value, f)
					}
				}
			}
		}
		if len(listed) != len(got) {
			t.Errorf("events list %d crossings, %d firings recorded", len(listed), len(got))
		}
		t.Logf("%d firings of %d alerts, %d events", len(got), len(alerts), len(crossedBodies(t, st, env, alerts)))
	})
}
