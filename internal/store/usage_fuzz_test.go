package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/usage"
	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// FuzzUsageStoreRoundTrip: whatever the decoder accepts, PostgreSQL stores (no error,
// which the API would answer with a 500) and reads back equal by value, in bounded size.
// Run: go test ./internal/store -run '^$' -fuzz FuzzUsageStoreRoundTrip -fuzztime 60s
func FuzzUsageStoreRoundTrip(f *testing.F) {
	metric := func(extra string) string {
		return `{"transaction_id":"t","mode":"increment","event_metrics":[{"account_id":"a","product":"p","metric_name":"m",` +
			`"metric_value":1,"metric_resolution":"hour"` + extra + `}]}`
	}
	for _, s := range []string{
		metric(""), metric(`,"metadata":{"a":1e63,"b":-1e62,"c":1e-62,"d":0e-62,"e":0e999999,"f":-0.0}`),
		metric(`,"metadata":{"n":1e131000}`), metric(`,"metadata":{"n":1e-16384}`), metric(`,"metadata":{"k":"\u0000"}`),
		metric(`,"metadata":{"k":"\ud83d\ude00 \\u0000 \u2028 <&>","\u00e9":[true,null,{"x":1.50}],"k":2}`),
		metric(`,"metadata":{"k":"\ud800"}`), metric(`,"metadata":{"a":[` + strings.TrimSuffix(strings.Repeat("1e63,", 250), ",") + `]}`),
		strings.Replace(metric(""), `"metric_value":1`, `"metric_value":-1.2345678901234567890123456789012345e-20`, 1),
		strings.Replace(metric(""), `"account_id":"a"`, `"account_id":"é東 \u00a0"`, 1),
	} {
		f.Add([]byte(s))
	}
	ctx := context.Background()
	st := testdb.New(f)
	env := testdb.Seed(f, st, "sandbox")
	f.Fuzz(func(t *testing.T, data []byte) {
		now := time.Now().UTC().Truncate(time.Microsecond)
		b, err := usage.Decode(data, now)
		if err != nil {
			return
		}
		b.TransactionID = uuid.NewString() // each input its own batch
		w := usageWriteOf(t, &b, now)
		if _, err := st.WriteUsage(ctx, env, w); err != nil {
			t.Fatalf("store refused an accepted batch: %v\n%q", err, data)
		}
		got := readBatch(t, st, env, b.TransactionID)
		if len(got) != len(b.Metrics) {
			t.Fatalf("read %d rows, wrote %d", len(got), len(b.Metrics))
		}
		byID := map[string]models.UsageEvent{}
		for _, e := range got {
			byID[e.ID] = e
		}
		for i, m := range b.Metrics {
			e := byID[w.Events[i].ID]
			if e.AccountID != m.AccountID || e.Product != m.Product || e.MetricName != m.MetricName ||
				decimal.Canonical(e.MetricValue) != m.Value.String() {
				t.Fatalf("row %d read back as %+v, sent %+v", i, e, m)
			}
			if len(e.Metadata) > 64<<10 {
				t.Fatalf("row %d metadata reads back as %d bytes (sent %d)", i, len(e.Metadata), len(m.Metadata))
			}
			if !sameJSON(t, []byte(e.Metadata), m.Metadata) {
				t.Fatalf("row %d metadata read back as %s, sent %s", i, e.Metadata, m.Metadata)
			}
		}
	})
}

// usageWriteOf is the rows of a batch, as the API builds them.
func usageWriteOf(t *testing.T, b *usage.Batch, now time.Time) store.UsageWrite {
	w := store.UsageWrite{
		Batch: models.UsageBatch{TransactionID: b.TransactionID, Mode: b.Mode, BodyHash: b.Hash(),
			Response: "{}", MetricsCount: len(b.Metrics), ReceivedAt: now},
		Events: make([]models.UsageEvent, len(b.Metrics)),
	}
	for i := range b.Metrics {
		m := &b.Metrics[i]
		w.Events[i] = models.UsageEvent{ID: uuid.NewString(), AccountID: m.AccountID, Product: m.Product,
			MetricName: m.MetricName, MetricValue: m.Value.String(), MetricResolution: m.Resolution,
			Metadata: string(m.Metadata), Timestamp: m.Timestamp}
	}
	for _, r := range usage.Rollups(*b) {
		w.Rollups = append(w.Rollups, models.UsageRollup{AccountID: r.AccountID, Product: r.Product, MetricName: r.MetricName,
			Resolution: r.Resolution, PeriodStart: r.PeriodStart, Value: r.Value.String()})
	}
	return w
}

func readBatch(t *testing.T, st *store.Store, env store.Env, tx string) []models.UsageEvent {
	var all []models.UsageEvent
	page := store.Page{Limit: 100}
	for {
		rows, more, err := st.UsageEvents(context.Background(), env, store.UsageEventFilter{TransactionID: tx}, page)
		if err != nil {
			t.Fatalf("read back: %v", err)
		}
		all = append(all, rows...)
		if !more || len(rows) == 0 {
			return all
		}
		page.StartingAfter = rows[len(rows)-1].ID
	}
}

// sameJSON compares two JSON texts by value: objects as maps (the last of duplicate keys,
// as jsonb keeps), numbers exactly.
func sameJSON(t *testing.T, a, b []byte) bool {
	return reflect.DeepEqual(jsonValue(t, a), jsonValue(t, b))
}

func jsonValue(t *testing.T, raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v: %q", err, raw)
	}
	return exact(v)
}

// exact replaces numbers by their exact value's text (1.50 and 1.5 alike).
func exact(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = exact(e)
		}
	case []any:
		for i, e := range x {
			x[i] = exact(e)
		}
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x)) // ≤ 64 characters written out: cheap
		if !ok {
			return "not a number: " + string(x)
		}
		return r.RatString()
	}
	return v
}
