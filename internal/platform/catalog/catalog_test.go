package catalog_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/accounts"
	"github.com/revops/revops/internal/domain/deals"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/catalog/catalogtest"
	"github.com/revops/revops/models"
)

var seed = []string{"deal-created", "deal-updated", "deal-signed", "deal-active", "account-created", "account-updated", "account-deleted"}

func TestCatalogLists(t *testing.T) {
	if got := catalog.SeedTypes(); !slices.Equal(got, seed) {
		t.Errorf("SeedTypes() = %v, want the seed's %v", got, seed)
	}
	if got, want := catalog.Names(), append(slices.Clone(seed), "endpoint-disabled", "meter-threshold-crossed", "endpoint-failing", "endpoint-recovered", "delivery-exhausted"); !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if !slices.Equal(webhook.EventTypes, seed) {
		t.Errorf("webhook.EventTypes = %v: the manual test offers the seed's types", webhook.EventTypes)
	}
	for _, et := range catalog.All() {
		if et.Description == "" || strings.Contains(et.Description, "\n") {
			t.Errorf("%s: description %q is not one line", et.Name, et.Description)
		}
		var s map[string]any
		if err := json.Unmarshal(et.Schema, &s); err != nil || s["$id"] != catalog.ID(et.Name) || s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: schema %.200s (err %v) lacks its $id or $schema", et.Name, et.Schema, err)
		}
		if _, err := catalogtest.Schema(et.Name); err != nil {
			t.Errorf("%s: %v", et.Name, err)
		}
	}
	// All hands out copies: a caller cannot change the catalog.
	all := catalog.All()
	all[0].Schema[0] = 'X'
	if again, _ := catalog.Lookup(all[0].Name); again.Schema[0] != '{' {
		t.Error("All() shares the catalog's schema bytes")
	}
}

func TestKnownOperationalMatches(t *testing.T) {
	for _, tc := range []struct {
		subs               []string
		typ                string
		known, operational bool
		match              bool
	}{
		{[]string{"*"}, "deal-signed", true, false, true},
		{[]string{"*"}, "account-deleted", true, false, true},
		{[]string{"*"}, "endpoint-disabled", true, true, false},
		{[]string{"*", "endpoint-disabled"}, "endpoint-disabled", true, true, true},
		{[]string{"endpoint-disabled"}, "endpoint-disabled", true, true, true},
		{[]string{"endpoint-disabled"}, "deal-created", true, false, false},
		{[]string{"deal-signed"}, "deal-signed", true, false, true},
		{[]string{"deal-signed"}, "deal-updated", true, false, false},
		{[]string{"deal-signed", "account-created"}, "account-created", true, false, true},
		{[]string{"*"}, "deal-exploded", false, false, false},
		{[]string{"deal-exploded"}, "deal-exploded", false, false, false},
		{[]string{"*"}, "*", false, false, false},
		{[]string{"*"}, "", false, false, false},
		{nil, "deal-signed", true, false, false},
		{[]string{}, "deal-signed", true, false, false},
		{[]string{"Deal-Signed"}, "deal-signed", true, false, false},
	} {
		if got := catalog.Known(tc.typ); got != tc.known {
			t.Errorf("Known(%q) = %v", tc.typ, got)
		}
		if got := catalog.Operational(tc.typ); got != tc.operational {
			t.Errorf("Operational(%q) = %v", tc.typ, got)
		}
		if got := catalog.Matches(tc.subs, tc.typ); got != tc.match {
			t.Errorf("Matches(%q, %q) = %v, want %v", tc.subs, tc.typ, got, tc.match)
		}
	}
}

// TestLimitsMatchInputRules: the schemas' copies of the field limits are the input rules'.
func TestLimitsMatchInputRules(t *testing.T) {
	for name, want := range map[string]int{
		"text": accounts.MaxNameLen, "url": deals.MaxURLLen, "items": deals.MaxItems,
		"properties": accounts.MaxPropertyKeys, "property key": accounts.MaxPropertyKeyLen,
		"property value": accounts.MaxPropertyValLen,
	} {
		if catalog.Limits[name] != want {
			t.Errorf("schema limit %s = %d, input rule %d", name, catalog.Limits[name], want)
		}
	}
	if deals.MaxTextLen != accounts.MaxNameLen {
		t.Errorf("deal texts (%d) and account names (%d) no longer share a limit", deals.MaxTextLen, accounts.MaxNameLen)
	}
}

func ptr(s string) *string { return &s }

// frame wraps an object as a delivery body, event first, as the store writes it.
func frame(t *testing.T, typ, key string, object any) []byte {
	t.Helper()
	obj, err := json.Marshal(object)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(`{"event":{"id":"0b4c7e1e-6a43-4f57-9d4e-6f0de3f0a8a1","time":"1763900000","type":"` + typ + `"},"` + key + `":` + string(obj) + `}`)
}

// bodies returns a valid body of each type, built by the API's own converters.
func bodies(t *testing.T) map[string][]byte {
	at := time.Date(2026, 11, 23, 12, 0, 0, 123456000, time.UTC)
	acc := models.Account{
		ID: "6f1d2c9e-1b7a-4a53-8f0e-2a9c3b4d5e6f", Name: "Initech", ExternalID: ptr("init-1"), Domain: ptr("initech.example"),
		BillingEmail: ptr("ap@initech.example"), Status: "draft", Properties: `{"seats":25,"sla":true,"tier":"gold"}`,
		CreatedAt: at, UpdatedAt: at,
	}
	bare := models.Account{ID: "7a2e3d0f-2c8b-4b64-9a1f-3bad4c5e6f70", Name: "Bare", Status: "draft", CreatedAt: at, UpdatedAt: at.Add(time.Second)}
	deal := models.Deal{
		ID: "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", AccountID: acc.ID, Status: "signed",
		ContractActivatesDate: ptr("2026-12-01"),
		NetPrice:              ptr("19999.00"), NetPriceCurrency: ptr("USD"), NetPricePrecision: ptr("2"),
		OriginalNetPrice: ptr("25000"), OriginalNetPriceCurrency: ptr("EUR"), OriginalNetPricePrecision: ptr("0"),
		OpportunityID: ptr("opp-1"), SignedContractURL: ptr("https://docs.example.com/c.pdf"),
		Skus:      `[{"id":"2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a","code":"PRO","name":"Pro","quantity":"10","unit_price":"1999.90"}]`,
		Terms:     `[{"id":"3e4f5a6b-7c8d-4e9f-8a1b-2c3d4e5f6a7b","name":"SLA","description":null,"start_date":"2026-01-01","end_date":null,"billing_frequency":"annual"}]`,
		CreatedAt: at, UpdatedAt: at,
	}
	draft := models.Deal{ID: "4f5a6b7c-8d9e-4f0a-9b1c-3d4e5f6a7b8c", AccountID: bare.ID, Status: "draft", CreatedAt: at, UpdatedAt: at}
	active := deal
	active.Status = "active"
	gone := bare
	gone.Status = "deprovisioned"
	return map[string][]byte{
		"deal-created":    frame(t, "deal-created", "deal", deals.ToObject(draft, bare)),
		"deal-updated":    frame(t, "deal-updated", "deal", deals.ToObject(deal, acc)),
		"deal-signed":     frame(t, "deal-signed", "deal", deals.ToObject(deal, acc)),
		"deal-active":     frame(t, "deal-active", "deal", deals.ToObject(active, acc)),
		"account-created": frame(t, "account-created", "account", accounts.ToObject(acc)),
		"account-updated": frame(t, "account-updated", "account", accounts.ToObject(bare)),
		"account-deleted": frame(t, "account-deleted", "account", accounts.ToObject(gone)),
		"endpoint-disabled": frame(t, "endpoint-disabled", "webhook_endpoint", catalog.DisabledEndpoint{
			ID: "5a6b7c8d-9e0f-4a1b-8c2d-4e5f6a7b8c9d", Description: ptr("billing"), Host: "hooks.example.com:8443",
			DisabledReason: "failing", FailingSince: at.Add(-120 * time.Hour).Format(time.RFC3339Nano),
		}),
		"meter-threshold-crossed": frame(t, "meter-threshold-crossed", "meter_alert", catalog.ThresholdCrossed{
			AlertID: "6b7c8d9e-0f1a-4b2c-9d3e-5f6a7b8c9d0e", Meter: "api_calls", MeterID: "7c8d9e0f-1a2b-4c3d-8e4f-6a7b8c9d0e1f",
			Threshold: "1000.5", Window: "month", More: 3, HeldBack: 2,
			Crossings: []catalog.Crossing{{
				AccountID: bare.ID, Group: map[string]*string{"region": ptr("eu"), "tier": nil},
				WindowStart: "2026-11-01T00:00:00Z", WindowEnd: "2026-12-01T00:00:00Z", Value: "1200.25",
				AsOf: at.Format(time.RFC3339Nano),
			}},
		}),
		"endpoint-failing": frame(t, "endpoint-failing", "webhook_endpoint", catalog.FailingEndpoint{
			HealthEndpoint: healthEndpoint, FailingSince: at.Add(-time.Hour).Format(time.RFC3339Nano),
		}),
		"endpoint-recovered": frame(t, "endpoint-recovered", "webhook_endpoint", catalog.RecoveredEndpoint{
			HealthEndpoint: healthEndpoint, FailingSince: ptr(at.Add(-time.Hour).Format(time.RFC3339Nano)), RecoveredAt: at.Format(time.RFC3339Nano),
		}),
		"delivery-exhausted": exhaustedBody(t, healthEndpoint),
	}
}

var healthEndpoint = catalog.HealthEndpoint{ID: "5a6b7c8d-9e0f-4a1b-8c2d-4e5f6a7b8c9d", Description: nil, Host: "hooks.example.com"}

// exhaustedBody is a delivery-exhausted body: the endpoint, then the delivery and the count.
func exhaustedBody(t *testing.T, ep catalog.HealthEndpoint) []byte {
	b := frame(t, "delivery-exhausted", "webhook_endpoint", ep)
	more, err := json.Marshal(catalog.ExhaustedDelivery{
		ID: "6b7c8d9e-0f1a-4b2c-9d3e-5f6a7b8c9d0e", EventID: "7c8d9e0f-1a2b-4c3d-8e4f-6a7b8c9d0e1f",
		EventType: "deal-updated", Attempts: 6, LastError: "status 500",
	})
	if err != nil {
		t.Fatal(err)
	}
	return append(b[:len(b)-1], []byte(`,"delivery":`+string(more)+`,"suppressed":3}`)...)
}

func TestSchemasAcceptRealBodies(t *testing.T) {
	got := bodies(t)
	for _, typ := range catalog.Names() {
		body, ok := got[typ]
		if !ok {
			t.Errorf("no sample body of %s", typ)
			continue
		}
		if name, err := catalogtest.Validate(body); err != nil || name != typ {
			t.Errorf("%s: %v\n%s", typ, err, body)
		}
		// CONTRACT §26: the event of this release carries its sequence; the one above, of
		// an event written before it, has none.
		sequenced := bytes.Replace(body, []byte(`"type":"`+typ+`"}`), []byte(`"type":"`+typ+`","sequence":7}`), 1)
		if name, err := catalogtest.Validate(sequenced); err != nil || name != typ || bytes.Equal(sequenced, body) {
			t.Errorf("%s with a sequence: %v\n%s", typ, err, sequenced)
		}
	}
}

// TestSchemasRejectWrongBodies: each schema fails a body that breaks CONTRACT §7, §6, §8
// or §13 in one way.
func TestSchemasRejectWrongBodies(t *testing.T) {
	good := bodies(t)
	for _, tc := range []struct {
		name, typ string
		mutate    func(body, obj map[string]any)
	}{
		{"deal without status", "deal-updated", func(_, d map[string]any) { delete(d, "status") }},
		{"price as a number", "deal-updated", func(_, d map[string]any) { d["net_price"] = 19999.00 }},
		{"price digits not its precision", "deal-updated", func(_, d map[string]any) { d["net_price"] = "19999.0" }},
		{"price without currency", "deal-updated", func(_, d map[string]any) { d["net_price_currency"] = nil }},
		{"price without precision", "deal-updated", func(_, d map[string]any) { d["original_net_price_precision"] = nil }},
		{"precision out of range", "deal-updated", func(_, d map[string]any) { d["net_price_precision"] = "7" }},
		{"signed price", "deal-updated", func(_, d map[string]any) { d["original_net_price"] = "-25000" }},
		{"lower-case currency", "deal-updated", func(_, d map[string]any) { d["net_price_currency"] = "usd" }},
		{"date not YYYY-MM-DD", "deal-updated", func(_, d map[string]any) { d["contract_activates_date"] = "01/12/2026" }},
		{"impossible date", "deal-updated", func(_, d map[string]any) { d["contract_activates_date"] = "2026-02-30" }},
		{"unknown status", "deal-updated", func(_, d map[string]any) { d["status"] = "closed" }},
		{"deal-signed of an unsigned deal", "deal-signed", func(_, d map[string]any) { d["status"] = "approved" }},
		{"deal-created of a signed deal", "deal-created", func(_, d map[string]any) { d["status"] = "signed" }},
		{"extra deal member", "deal-updated", func(_, d map[string]any) { d["amount"] = "1" }},
		{"http contract url", "deal-updated", func(_, d map[string]any) { d["signed_contract_url"] = "http://docs.example.com/c.pdf" }},
		{"customer without name", "deal-updated", func(_, d map[string]any) { delete(d["customer"].(map[string]any), "name") }},
		{"customer id not a uuid", "deal-updated", func(_, d map[string]any) { d["customer"].(map[string]any)["id"] = "acct_1" }},
		{"sku quantity as a number", "deal-updated", func(_, d map[string]any) { d["skus"].([]any)[0].(map[string]any)["quantity"] = 10 }},
		{"term frequency unknown", "deal-updated", func(_, d map[string]any) { d["terms"].([]any)[0].(map[string]any)["billing_frequency"] = "weekly" }},
		{"skus null", "deal-updated", func(_, d map[string]any) { d["skus"] = nil }},
		{"deal as object under account", "account-updated", func(b, d map[string]any) { b["deal"] = d; delete(b, "account") }},
		{"account with object deal", "account-updated", func(_, a map[string]any) { a["object"] = "deal" }},
		{"account property nested", "account-created", func(_, a map[string]any) { a["properties"].(map[string]any)["x"] = map[string]any{} }},
		{"account created active", "account-created", func(_, a map[string]any) { a["status"] = "active" }},
		{"account-deleted not deprovisioned", "account-deleted", func(_, a map[string]any) { a["status"] = "active" }},
		{"account bad email", "account-created", func(_, a map[string]any) { a["billing_email"] = "not an email" }},
		{"account time not UTC", "account-created", func(_, a map[string]any) { a["created_at"] = "2026-11-23T13:00:00+01:00" }},
		{"account name empty", "account-created", func(_, a map[string]any) { a["name"] = "" }},
		{"event type of another event", "deal-signed", func(b, _ map[string]any) { b["event"].(map[string]any)["type"] = "deal-updated" }},
		{"event time as a number", "deal-signed", func(b, _ map[string]any) { b["event"].(map[string]any)["time"] = 1763900000 }},
		{"event time as RFC 3339", "deal-signed", func(b, _ map[string]any) { b["event"].(map[string]any)["time"] = "2026-11-23T12:00:00Z" }},
		{"event id not a uuid", "deal-signed", func(b, _ map[string]any) { b["event"].(map[string]any)["id"] = "evt_1" }},
		{"event without id", "deal-signed", func(b, _ map[string]any) { delete(b["event"].(map[string]any), "id") }},
		{"sequence zero", "deal-signed", func(b, _ map[string]any) { b["event"].(map[string]any)["sequence"] = 0 }},
		{"sequence as a string", "deal-signed", func(b, _ map[string]any) { b["event"].(map[string]any)["sequence"] = "3" }},
		{"sequence not whole", "deal-signed", func(b, _ map[string]any) { b["event"].(map[string]any)["sequence"] = 2.5 }},
		{"sequence null", "deal-signed", func(b, _ map[string]any) { b["event"].(map[string]any)["sequence"] = nil }},
		{"extra event member", "deal-signed", func(b, _ map[string]any) { b["event"].(map[string]any)["seq"] = 1 }},
		{"extra top-level member", "deal-signed", func(b, _ map[string]any) { b["account"] = map[string]any{} }},
		{"endpoint URL instead of host", "endpoint-disabled", func(_, e map[string]any) { e["host"] = "hooks.example.com/t/secret-token" }},
		{"endpoint host with credentials", "endpoint-disabled", func(_, e map[string]any) { e["host"] = "user:pw@hooks.example.com" }},
		{"endpoint url member", "endpoint-disabled", func(_, e map[string]any) { e["url"] = "https://hooks.example.com/t/secret-token" }},
		{"endpoint without failing_since", "endpoint-disabled", func(_, e map[string]any) { delete(e, "failing_since") }},
		{"endpoint disabled by hand", "endpoint-disabled", func(_, e map[string]any) { e["disabled_reason"] = "manual" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body map[string]any
			if err := json.Unmarshal(good[tc.typ], &body); err != nil {
				t.Fatal(err)
			}
			key := map[bool]string{true: "deal", false: "account"}[strings.HasPrefix(tc.typ, "deal-")]
			if tc.typ == catalog.EndpointDisabled {
				key = "webhook_endpoint"
			}
			tc.mutate(body, body[key].(map[string]any))
			bad, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			if err := catalogtest.ValidateAs(tc.typ, bad); err == nil {
				t.Errorf("schema of %s accepts %s", tc.typ, bad)
			}
		})
	}
}

// TestManualTestSamplesHaveTheCatalogShape: the objects of the §8 test body (a shape of
// its own, not in the catalog) are valid deals and accounts, so receivers can trust them.
// The samples are one signed deal and one active account.
func TestManualTestSamplesHaveTheCatalogShape(t *testing.T) {
	for key, typ := range map[string]string{"deal": "deal-signed", "account": "account-updated"} {
		b, err := webhook.TestBody(typ)
		if err != nil {
			t.Fatal(err)
		}
		var tb map[string]json.RawMessage
		if err := json.Unmarshal(b, &tb); err != nil {
			t.Fatal(err)
		}
		if err := catalogtest.ValidateAs(typ, frame(t, typ, key, tb[key])); err != nil {
			t.Errorf("%s sample: %v", typ, err)
		}
	}
}
