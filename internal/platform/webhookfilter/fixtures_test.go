package webhookfilter_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/revops/revops/internal/platform/webhookfilter"
)

// dealBody is a deal-signed delivery as the store writes it (store.webhookBody: event
// head, then the deal snapshot in the shape of webhook.TestBody's sample), copied so that
// the package keeps no store or domain import.
const dealBody = `{"event":{"id":"5f0c3f7e-8d43-4a55-9a1b-2b8f61c1b7a2","time":"2025-01-05T00:00:00.123456Z","type":"deal-signed"},` +
	`"deal":{"contract_activates_date":"2025-02-01","created_at":"2025-01-01T00:00:00Z",` +
	`"customer":{"billing_email":"billing@example.com","external_id":"cust_0001","id":"00000000-0000-4000-8000-000000000001","name":"Example Customer Ltd"},` +
	`"id":"00000000-0000-4000-8000-000000000002","net_price":"19999.00","net_price_currency":"USD","net_price_precision":"2",` +
	`"object":"deal","opportunity_id":"opp_0001","original_net_price":"24999.00","original_net_price_currency":"USD",` +
	`"original_net_price_precision":"2","signed_contract_url":"https://example.com/contracts/0001.pdf",` +
	`"skus":[{"code":"PLAT-ENT","id":"00000000-0000-4000-8000-000000000003","name":"Platform Enterprise","quantity":"1","unit_price":"19999.00"}],` +
	`"status":"signed","terms":[{"billing_frequency":"annual","description":"Annual subscription","end_date":"2026-01-31",` +
	`"id":"00000000-0000-4000-8000-000000000004","name":"Subscription","start_date":"2025-02-01"}],"updated_at":"2025-01-05T00:00:00Z"}}`

func items(prefix string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s_%04d", prefix, i)
	}
	return out
}

// bigFilter is a filter of the worst shape §25 allows that still matches dealBody: as
// close to MaxBytes as whole $in items get, MaxDepth levels deep, long $in lists that do
// not hold the value (every item compared) and an $or whose last branch is the one that
// holds. Its deepest arrays are level 8: filter, $or array, filter, $and array, filter,
// $not filter, operator object, $in array.
func bigFilter(t testing.TB) []byte {
	t.Helper()
	build := func(n int) []byte {
		branch := func(path string, prefix string, n int, rest map[string]any) map[string]any {
			return map[string]any{"$and": []any{
				map[string]any{"$not": map[string]any{path: map[string]any{"$in": items(prefix, n)}}},
				rest,
			}}
		}
		f := map[string]any{
			"event.type":  map[string]any{"$in": []any{"deal-created", "deal-updated", "deal-signed", "deal-active"}},
			"deal.status": map[string]any{"$nin": []any{"draft", "pending_approval", "cancelled"}, "$exists": true},
			"$or": []any{
				branch("deal.customer.external_id", "cust_x", n, map[string]any{"deal.net_price": map[string]any{"$gte": "1000000"}}),
				branch("deal.opportunity_id", "opp_x", n, map[string]any{"deal.net_price_currency": map[string]any{"$in": []any{"EUR", "GBP", "CHF", "JPY"}}}),
				branch("deal.customer.billing_email", "mail_x", n, map[string]any{"deal.net_price": map[string]any{"$gte": 1000, "$lt": "1000000.00"}}),
			},
		}
		raw, err := json.Marshal(f)
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
