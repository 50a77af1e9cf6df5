package webhook

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/revops/revops/internal/platform/catalog"
)

// EventTypes are the webhook event names of the seed, the types the manual test has a
// sample for: the catalog's non-operational types.
var EventTypes = catalog.SeedTypes()

// KnownType tells whether t is a type of the seed (one the manual test can send).
func KnownType(t string) bool { return catalog.Known(t) && !catalog.Operational(t) }

// sampleAccount and sampleDeal are fixed, obviously fictitious objects in the shapes of
// CONTRACT §6 and §7, so receivers can test their parsing.
var sampleAccount = map[string]any{
	"id": "00000000-0000-4000-8000-000000000001", "object": "account", "name": "Example Customer Ltd",
	"external_id": "cust_0001", "domain": "example.com", "billing_email": "billing@example.com",
	"status": "active", "properties": map[string]any{"tier": "enterprise", "seats": 25, "sla": true},
	"created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-01-02T00:00:00Z",
}

var sampleDeal = map[string]any{
	"id": "00000000-0000-4000-8000-000000000002", "object": "deal", "status": "signed",
	"contract_activates_date": "2025-02-01",
	"customer": map[string]any{
		"id": "00000000-0000-4000-8000-000000000001", "name": "Example Customer Ltd",
		"external_id": "cust_0001", "billing_email": "billing@example.com",
	},
	"net_price_currency": "USD", "net_price_precision": "2", "net_price": "19999.00",
	"original_net_price_currency": "USD", "original_net_price_precision": "2", "original_net_price": "24999.00",
	"opportunity_id": "opp_0001", "signed_contract_url": "https://example.com/contracts/0001.pdf",
	"skus": []any{map[string]any{
		"id": "00000000-0000-4000-8000-000000000003", "code": "PLAT-ENT", "name": "Platform Enterprise",
		"quantity": "1", "unit_price": "19999.00",
	}},
	"terms": []any{map[string]any{
		"id": "00000000-0000-4000-8000-000000000004", "name": "Subscription", "description": "Annual subscription",
		"start_date": "2025-02-01", "end_date": "2026-01-31", "billing_frequency": "annual",
	}},
	"created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-01-05T00:00:00Z",
}

// TestBody is the manual test's body: {"event":"<type>","deal"|"account":{…sample…}},
// where event is only the name, as the seed describes the manual test.
func TestBody(eventType string) ([]byte, error) {
	if !KnownType(eventType) {
		return nil, fmt.Errorf("unknown event type %q", eventType)
	}
	key, object := "deal", sampleDeal
	if strings.HasPrefix(eventType, "account-") {
		key, object = "account", sampleAccount
	}
	// event first, as in real deliveries (map keys would sort "account" before "event").
	ev, err := json.Marshal(eventType)
	if err != nil {
		return nil, err
	}
	obj, err := json.Marshal(object)
	if err != nil {
		return nil, err
	}
	return []byte(`{"event":` + string(ev) + `,"` + key + `":` + string(obj) + `}`), nil
}
