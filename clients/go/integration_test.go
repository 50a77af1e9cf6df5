package revops

// Integration tests against a running Revops. They run only when REVOPS_BASE_URL and
// REVOPS_API_KEY (a secret sandbox key) are set, and make their own data (unique names,
// filters by id), so they pass on a server that other runs, or the TypeScript suite,
// use at the same time. The server should run with REVOPS_RATE_LIMIT=20 (the 429 test) and
// trust the webhook receiver's certificate: REVOPS_WEBHOOK_CA_FILE=
// clients/go/testdata/httptest-cert.pem, or REVOPS_TEST_RECEIVER_CERT and
// REVOPS_TEST_RECEIVER_KEY naming a certificate for 127.0.0.1 it trusts already (the
// repository's runner issues one from revops dev's CA). REVOPS_TEST_SKIP_WEBHOOKS=1
// skips the tests that need deliveries to 127.0.0.1.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// liveClient returns a client for the server under test, or skips the test.
func liveClient(t *testing.T, opts ...Option) *Client {
	t.Helper()
	if os.Getenv("REVOPS_BASE_URL") == "" || os.Getenv("REVOPS_API_KEY") == "" {
		t.Skip("integration: set REVOPS_BASE_URL and REVOPS_API_KEY (a secret sandbox key)")
	}
	// Generous retries: the server may be rate limited on purpose (REVOPS_RATE_LIMIT=20).
	c, err := NewClient(append([]Option{WithMaxRetries(10), WithBackoff(200*time.Millisecond, 2*time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	who, err := c.WhoAmI(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if who.Environment != EnvironmentSandbox || who.Type != KeyTypeSecret {
		t.Fatalf("integration tests need a secret sandbox key, not a %s %s key", who.Type, who.Environment)
	}
	return c
}

func unique(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
}

// testCtx bounds a test's calls: a hang guard above the sum of the test's own waits
// for deliveries and jobs, which go through Temporal on a possibly loaded machine.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func wantAPIError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.Status != status || apiErr.Code != code {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
	if apiErr.RequestID == "" {
		t.Errorf("%s without a request id", code)
	}
}

func TestIntegrationServedDocumentMatchesTheClient(t *testing.T) {
	c := liveClient(t)
	ctx := testCtx(t)
	var raw json.RawMessage
	if err := c.Do(ctx, http.MethodGet, "/v1/openapi.json", nil, &raw); err != nil {
		t.Fatal(err)
	}
	checkGenerated(t, raw, os.Getenv("REVOPS_BASE_URL")+"/v1/openapi.json")
	doc, err := c.GetOpenAPI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.Openapi, "3.1") {
		t.Fatalf("openapi %q", doc.Openapi)
	}
	types, err := c.ListEventTypes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []EventType
	for _, et := range types.Data {
		names = append(names, EventType(et.Name))
	}
	for _, want := range []EventType{EventTypeAccountCreated, EventTypeDealSigned, EventTypeEndpointDisabled} {
		if !slices.Contains(names, want) {
			t.Errorf("event types %v lack %s", names, want)
		}
	}
}

func TestIntegrationAccountLifecycle(t *testing.T) {
	c := liveClient(t)
	ctx := testCtx(t)
	ext := unique("go-acct")
	a, err := c.CreateAccount(ctx, &AccountCreate{
		Name: "Go client " + ext, ExternalID: Value(ext), Domain: Value("example.com"), BillingEmail: Value("billing@example.com"),
		Properties: map[string]any{"tier": "gold", "seats": 5},
	})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != AccountStatusDraft || a.Properties["tier"] != "gold" {
		t.Fatalf("created %+v", a)
	}
	got, err := c.GetAccount(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ExternalID == nil || *got.ExternalID != ext {
		t.Fatalf("read %+v", got)
	}
	// Null clears domain; external_id and billing_email, left unset, keep their values.
	upd, err := c.UpdateAccount(ctx, a.ID, &AccountUpdate{
		Name: String("Renamed " + ext), Domain: Null[string](), Properties: map[string]any{"tier": nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	if upd.Name != "Renamed "+ext || upd.Properties["tier"] != nil || upd.Properties["seats"] == nil || upd.Domain != nil {
		t.Fatalf("updated %+v", upd)
	}
	got, err = c.GetAccount(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Domain != nil || got.ExternalID == nil || *got.ExternalID != ext || got.BillingEmail == nil || *got.BillingEmail != "billing@example.com" {
		t.Fatalf("read after clearing domain: domain %v, external_id %v, billing_email %v", got.Domain, got.ExternalID, got.BillingEmail)
	}
	list, err := c.ListAccounts(ctx, &ListAccountsParams{ExternalID: ext})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 1 || list.Data[0].ID != a.ID {
		t.Fatalf("listed %+v", list.Data)
	}
	act, err := c.ActivateAccount(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if act.Status != AccountStatusActive {
		t.Fatalf("activated: %s", act.Status)
	}
	dep, err := c.DeprovisionAccount(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if dep.Status != AccountStatusDeprovisioned {
		t.Fatalf("deprovisioned: %s", dep.Status)
	}
	_, err = c.UpdateAccount(ctx, a.ID, &AccountUpdate{Name: String("too late")})
	wantAPIError(t, err, 409, "invalid_state_transition")
	_, err = c.GetAccount(ctx, "00000000-0000-4000-8000-000000000000")
	wantAPIError(t, err, 404, "resource_missing")

	// Its events: created, updated, deleted; each readable by id.
	var types []EventType
	for ev, err := range c.ListEventsAll(ctx, &ListEventsParams{ObjectID: a.ID, Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		one, err := c.GetEvent(ctx, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		if one.ObjectID != a.ID {
			t.Fatalf("event %s is of %s", ev.ID, one.ObjectID)
		}
	}
	for _, want := range []EventType{EventTypeAccountCreated, EventTypeAccountUpdated, EventTypeAccountDeleted} {
		if !slices.Contains(types, want) {
			t.Errorf("events %v lack %s", types, want)
		}
	}
}

func newAccount(t *testing.T, c *Client, ctx context.Context) *Account {
	t.Helper()
	ext := unique("go-deals")
	a, err := c.CreateAccount(ctx, &AccountCreate{Name: "Go deals " + ext, ExternalID: Value(ext)})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestIntegrationDealLifecycle(t *testing.T) {
	c := liveClient(t)
	ctx := testCtx(t)
	a := newAccount(t, c, ctx)
	d, err := c.CreateDeal(ctx, &DealCreate{Customer: DealCustomerRef{ID: a.ID}, OpportunityID: Value("opp-1")})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != DealStatusDraft || d.Customer.ID != a.ID || d.OpportunityID == nil || *d.OpportunityID != "opp-1" {
		t.Fatalf("created %+v", d)
	}
	d, err = c.UpdateDeal(ctx, d.ID, &DealUpdate{
		NetPrice: Value("1200.50"), NetPriceCurrency: Value("EUR"), NetPricePrecision: Value(Precision2),
		OpportunityID: Null[string](), // cleared
		Skus:          []SkuInput{{Code: String("SEAT"), Name: String("Seat"), Quantity: String("10"), UnitPrice: String("120.05")}},
		Terms:         []TermInput{{Name: String("Year 1"), BillingFrequency: Ptr(BillingFrequencyAnnual), Description: Value("First year")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.NetPrice == nil || *d.NetPrice != "1200.50" || d.OpportunityID != nil || len(d.Skus) != 1 || d.Skus[0].ID == "" || len(d.Terms) != 1 {
		t.Fatalf("updated %+v", d)
	}
	if got, err := c.GetDeal(ctx, d.ID); err != nil || got.OpportunityID != nil || got.NetPriceCurrency == nil || *got.NetPriceCurrency != "EUR" {
		t.Fatalf("read after clearing opportunity_id: %+v, %v", got, err)
	}
	_, err = c.ApproveDeal(ctx, d.ID) // a draft cannot be approved
	wantAPIError(t, err, 409, "invalid_state_transition")
	for _, step := range []struct {
		call func(context.Context, string, ...RequestOption) (*Deal, error)
		want DealStatus
	}{{c.SubmitDeal, DealStatusPendingApproval}, {c.ApproveDeal, DealStatusApproved}, {c.SignDeal, DealStatusSigned}, {c.ActivateDeal, DealStatusActive}} {
		d, err = step.call(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Status != step.want {
			t.Fatalf("status %s, want %s", d.Status, step.want)
		}
	}
	got, err := c.GetDeal(ctx, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != DealStatusActive {
		t.Fatalf("read %s", got.Status)
	}
	acct, err := c.GetAccount(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if acct.Status != AccountStatusActive {
		t.Errorf("activating the deal left its account %s", acct.Status)
	}
	other, err := c.CreateDeal(ctx, &DealCreate{Customer: DealCustomerRef{ID: a.ID}, Submit: Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if other.Status != DealStatusPendingApproval {
		t.Fatalf("created with submit: %s", other.Status)
	}
	v, err := c.VoidDeal(ctx, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != DealStatusVoid {
		t.Fatalf("voided: %s", v.Status)
	}
}

func TestIntegrationListWalkedToTheEnd(t *testing.T) {
	ct := &countingTransport{calls: map[string][]attemptRecord{}}
	c := liveClient(t, WithHTTPClient(&http.Client{Transport: ct, Timeout: time.Minute}))
	ctx := testCtx(t)
	a := newAccount(t, c, ctx)
	var created []string
	for range 7 {
		d, err := c.CreateDeal(ctx, &DealCreate{Customer: DealCustomerRef{ID: a.ID}})
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, d.ID)
	}
	before, limitedBefore := ct.requests.Load(), ct.tooMany.Load()
	var walked []string
	for d, err := range c.ListDealsAll(ctx, &ListDealsParams{Customer: a.ID, Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, d.ID)
	}
	slices.Reverse(created) // lists are newest first
	if !slices.Equal(walked, created) {
		t.Fatalf("walked %v, created %v", walked, created)
	}
	// Pages are the walk's requests that were not answered 429 (and retried).
	if pages := (ct.requests.Load() - before) - (ct.tooMany.Load() - limitedBefore); pages < 4 {
		t.Fatalf("%d pages for 7 deals of 2 a page", pages)
	}
}

func TestIntegrationUsageAndMeters(t *testing.T) {
	c := liveClient(t)
	ctx := testCtx(t)
	acct, metric := unique("go-usage-acct"), unique("go_metric")
	key := strings.ReplaceAll(unique("go-meter"), "_", "-")
	meter, err := c.CreateMeter(ctx, &MeterCreate{
		Key: key, Description: Value("Go client test"), Filter: MeterCreateFilter{MetricName: metric},
		Aggregation: MeterAggregationSum, GroupBy: []string{"region"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.DeleteMeter(context.Background(), key) })
	if meter.Key != key || meter.Filter.MetricName != metric {
		t.Fatalf("created %+v", meter)
	}
	now := time.Now().UTC()
	batch, err := c.IngestUsage(ctx, &UsageEventBatchRequest{
		TransactionID: unique("go-tx"), Mode: UsageModeIncrement,
		EventMetrics: []UsageMetricInput{
			{AccountID: acct, Product: "api", MetricName: metric, MetricValue: 2, MetricResolution: ResolutionDay, Metadata: map[string]any{"region": "eu"}, Timestamp: &now},
			{AccountID: acct, Product: "api", MetricName: metric, MetricValue: 3.5, MetricResolution: ResolutionDay, Metadata: map[string]any{"region": "us"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if batch.MetricsAccepted != 2 || batch.Duplicate {
		t.Fatalf("ingested %+v", batch)
	}
	n := 0
	for ev, err := range c.ListUsageEventsAll(ctx, &ListUsageEventsParams{AccountID: acct, Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.MetricName != metric {
			t.Fatalf("usage event %+v", ev)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d usage events", n)
	}
	sum, err := c.UsageSummary(ctx, &UsageSummaryParams{Resolution: ResolutionDay, AccountID: acct, MetricName: metric})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Data) != 1 || sum.Data[0].Value != 5.5 {
		t.Fatalf("summary %+v", sum.Data)
	}

	m, err := c.UpdateMeter(ctx, key, &MeterUpdate{Description: String("changed")})
	if err != nil {
		t.Fatal(err)
	}
	if m.Description != "changed" {
		t.Fatalf("updated %+v", m)
	}
	got, err := c.GetMeter(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != meter.ID {
		t.Fatalf("read %+v", got)
	}
	found := false
	for m, err := range c.ListMetersAll(ctx, &ListMetersParams{Limit: 5}) {
		if err != nil {
			t.Fatal(err)
		}
		found = found || m.Key == key
	}
	if !found {
		t.Fatal("the meter is not listed")
	}
	// The figures may trail ingest by a few seconds (as_of): wait for both groups.
	day := now.Truncate(24 * time.Hour)
	params := &MeterValuesParams{From: day, To: day.AddDate(0, 0, 1), Window: ResolutionDay, AccountID: acct, GroupBy: "region", Limit: 1}
	deadline := time.Now().Add(30 * time.Second)
	for {
		total, rows := 0.0, 0
		for v, err := range c.MeterValuesAll(ctx, key, params) {
			if err != nil {
				t.Fatal(err)
			}
			total += v.Value
			rows++
		}
		if rows == 2 && total == 5.5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("meter values: %d rows, total %v; want 2 rows, 5.5", rows, total)
		}
		time.Sleep(500 * time.Millisecond)
	}
	testMeterAlerts(t, c, key, acct)
	del, err := c.DeleteMeter(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !del.Deleted {
		t.Fatalf("deleted %+v", del)
	}
	_, err = c.GetMeter(ctx, key)
	wantAPIError(t, err, 404, "resource_missing")
}

// testMeterAlerts defines, reads, lists and deletes alerts of the meter key (CONTRACT §24).
func testMeterAlerts(t *testing.T, c *Client, key, acct string) {
	ctx := testCtx(t)
	a, err := c.CreateMeterAlert(ctx, key, &MeterAlertCreate{
		Threshold: "1000.50", Window: MeterAlertWindowMonth, AccountID: Value(acct),
		Group: map[string]string{"region": "eu"}, Description: Value("EU spend"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if a.Meter != key || a.Threshold != 1000.5 || a.AccountID == nil || *a.AccountID != acct || a.Group["region"] != "eu" {
		t.Fatalf("created %+v", a)
	}
	b, err := c.CreateMeterAlert(ctx, key, &MeterAlertCreate{Threshold: 10, Window: MeterAlertWindowDay})
	if err != nil {
		t.Fatal(err)
	}
	if b.AccountID != nil || len(b.Group) != 0 {
		t.Fatalf("created %+v", b)
	}
	got, err := c.GetMeterAlert(ctx, key, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != a.ID || got.Window != MeterAlertWindowMonth {
		t.Fatalf("read %+v", got)
	}
	var ids []string
	for al, err := range c.ListMeterAlertsAll(ctx, key, &ListMeterAlertsParams{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, al.ID)
	}
	if len(ids) != 2 || ids[0] != b.ID || ids[1] != a.ID {
		t.Fatalf("listed %v, want [%s %s]", ids, b.ID, a.ID)
	}
	_, err = c.CreateMeterAlert(ctx, key, &MeterAlertCreate{Threshold: 0, Window: MeterAlertWindowDay})
	wantAPIError(t, err, 400, "parameter_invalid")
	del, err := c.DeleteMeterAlert(ctx, key, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !del.Deleted || del.ID != a.ID {
		t.Fatalf("deleted %+v", del)
	}
	_, err = c.GetMeterAlert(ctx, key, a.ID)
	wantAPIError(t, err, 404, "resource_missing")
}
