package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/metrics/metricstest"
)

// TestAPIMetrics drives a few requests and reads the revops_* series they leave in a real
// scrape of metrics.Serve: requests by route template (never a raw id) and status,
// latency histograms, usage metrics accepted (replays not counted), events emitted.
func TestAPIMetrics(t *testing.T) {
	h := newHarness(t)
	sk := h.key["secret sandbox"]
	before := metricstest.Scrape(t)

	acct := h.do("POST", "/v1/accounts", sk, map[string]any{"name": "Metrics Ltd"})
	id, _ := acct.json(t)["id"].(string)
	for _, c := range []struct {
		method, path string
		body         any
		status       int
	}{
		{"GET", "/v1/accounts/" + id, nil, 200},
		{"GET", "/v1/accounts/" + id, nil, 200},
		{"GET", "/v1/accounts/00000000-0000-4000-8000-00000000dead", nil, 404},
		{"GET", "/v1/no-such-route/" + id, nil, 404},
		{"POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": id}}, 201},
		{"POST", "/v1/usage/events", usageBatch, 201},
		{"POST", "/v1/usage/events", usageBatch, 200}, // replay: not counted again
	} {
		if r := h.do(c.method, c.path, sk, c.body); r.Status != c.status {
			t.Fatalf("%s %s: %d, want %d: %s", c.method, c.path, r.Status, c.status, r.Body)
		}
	}
	if r := h.do("GET", "/v1/accounts", "", nil); r.Status != http.StatusUnauthorized {
		t.Fatalf("no key: %d", r.Status)
	}
	after := metricstest.Scrape(t)

	for series, want := range map[string]float64{
		`revops_http_requests_total{method="POST",route="/v1/accounts",status="201"}`:                    1,
		`revops_http_requests_total{method="GET",route="/v1/accounts/:id",status="200"}`:                 2,
		`revops_http_requests_total{method="GET",route="/v1/accounts/:id",status="404"}`:                 1,
		`revops_http_requests_total{method="GET",route="unmatched",status="404"}`:                        1,
		`revops_http_requests_total{method="GET",route="/v1/accounts",status="401"}`:                     1,
		`revops_http_requests_total{method="POST",route="/v1/usage/events",status="200"}`:                1,
		`revops_http_request_duration_seconds_count{method="GET",route="/v1/accounts/:id",status="200"}`: 2,
		`revops_usage_metrics_accepted_total{environment="sandbox"}`:                                     2,
		`revops_events_emitted_total{type="account-created"}`:                                            1,
		`revops_events_emitted_total{type="deal-created"}`:                                               1,
	} {
		if d := after.Value(t, series) - before.Value(t, series); d != want {
			t.Errorf("%s grew by %v, want %v", series, d, want)
		}
	}
	if _, ok := after.Lookup(t, `revops_http_request_duration_seconds_bucket{method="GET",route="/v1/accounts/:id",status="200",le="+Inf"}`); !ok {
		t.Error("no latency histogram buckets")
	}
	uuid := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-`)
	for _, line := range after.Series("revops_http_") {
		if uuid.MatchString(line) || strings.Contains(line, "no-such-route") {
			t.Errorf("a raw path leaked into a label: %s", line)
		}
	}
}

// TestUnknownMethodsCountAsOther: any token is a valid HTTP method, so labelling series
// with it would let clients create series without bound (CONTRACT §15).
func TestUnknownMethodsCountAsOther(t *testing.T) {
	h := newHarness(t)
	sk := h.key["secret sandbox"]
	before := metricstest.Scrape(t)
	for _, m := range []string{"BREW", "get", "X-" + strings.Repeat("A", 200), "PROPFIND"} {
		if r := h.do(m, "/v1/accounts", sk, nil); r.Status != http.StatusMethodNotAllowed {
			t.Fatalf("%.10s: %d, want 405: %s", m, r.Status, r.Body)
		}
	}
	h.do("DELETE", "/v1/accounts", sk, nil)
	after := metricstest.Scrape(t)
	for series, want := range map[string]float64{
		`revops_http_requests_total{method="OTHER",route="unmatched",status="405"}`:  4,
		`revops_http_requests_total{method="DELETE",route="unmatched",status="405"}`: 1,
	} {
		if d := after.Value(t, series) - before.Value(t, series); d != want {
			t.Errorf("%s grew by %v, want %v", series, d, want)
		}
	}
	for _, line := range after.Series("revops_http_") {
		if strings.Contains(line, "BREW") || strings.Contains(line, `method="get"`) || strings.Contains(line, "PROPFIND") {
			t.Errorf("a client's method became a label: %s", line)
		}
	}
}
