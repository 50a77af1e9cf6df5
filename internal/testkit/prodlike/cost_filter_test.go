package prodlike_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/revops/revops/internal/platform/webhookfilter"
)

// costFilter is BenchmarkDeliveryCost's cost.filter=4k: the costliest filter §25 allows
// that every change of the benchmark passes — as close to 4 KiB as whole $in items get,
// 8 levels deep (filter, $or array, filter, $and array, filter, $not filter, operator
// object, $in array), long $in lists that do not hold the value (every item compared) and
// an $or whose last branch is the one that holds (the changes rename accounts to "ck…").
func costFilter(t testing.TB) []byte {
	t.Helper()
	build := func(n int) []byte {
		items := func(prefix string) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = fmt.Sprintf("%s_%04d", prefix, i)
			}
			return out
		}
		branch := func(path, prefix string, rest map[string]any) map[string]any {
			return map[string]any{"$and": []any{
				map[string]any{"$not": map[string]any{path: map[string]any{"$in": items(prefix)}}},
				rest,
			}}
		}
		raw, err := json.Marshal(map[string]any{
			"event.type":     map[string]any{"$in": []any{"account-created", "account-updated", "account-deleted"}},
			"account.object": "account",
			"$or": []any{
				branch("account.external_id", "ext_x", map[string]any{"account.status": map[string]any{"$in": []any{"deleted", "archived"}}}),
				branch("account.domain", "domain_x", map[string]any{"account.name": map[string]any{"$lt": "ck"}}),
				branch("account.billing_email", "mail_x", map[string]any{"account.name": map[string]any{"$gte": "ck", "$lt": "cl"}}),
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	n := 1
	for n < webhookfilter.MaxItems && len(build(n+1)) <= webhookfilter.MaxBytes {
		n++
	}
	return build(n)
}

// TestCostFilter: cost.filter=4k is what it says, and the benchmark's changes pass it
// (else no webhook would arrive and the phase would time out instead of measuring).
func TestCostFilter(t *testing.T) {
	raw := costFilter(t)
	if len(raw) > webhookfilter.MaxBytes || len(raw) < webhookfilter.MaxBytes-64 {
		t.Fatalf("costFilter is %d bytes", len(raw))
	}
	f, err := webhookfilter.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, account := range []string{
		`{"id":"00000000-0000-4000-8000-000000000001","object":"account","name":"ck2-17","external_id":null,"domain":null,"billing_email":null,"status":"draft","properties":{},"created_at":"2026-11-27T00:00:00Z","updated_at":"2026-11-27T00:00:01Z"}`,
		`{"id":"00000000-0000-4000-8000-000000000001","object":"account","name":"ck1-0","status":"active"}`,
	} {
		body := `{"event":{"id":"5f0c3f7e-8d43-4a55-9a1b-2b8f61c1b7a2","time":"2026-11-27T00:00:01.000001Z","type":"account-updated"},"account":` + account + `}`
		if ok, err := f.Match([]byte(body)); err != nil || !ok {
			t.Fatalf("costFilter on %s: %v, %v", body, ok, err)
		}
	}
	t.Logf("%d bytes, %d steps", len(raw), f.Steps())
}
