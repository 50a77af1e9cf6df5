package webhook

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// TestRateLimitMember: CONTRACT §27's rate_limit, null or {"limit":1..1000,
// "period":"1s"|"1m"}; anything else is a 400 on the member at fault.
func TestRateLimitMember(t *testing.T) {
	tests := []struct {
		raw    string
		want   Pace
		faults string // "param:code,…"
	}{
		{`null`, Pace{}, ""},
		{`{"limit":5,"period":"1s"}`, Pace{5, "1s"}, ""},
		{`{"limit":1,"period":"1m"}`, Pace{1, "1m"}, ""},
		{`{"limit":1000,"period":"1s"}`, Pace{1000, "1s"}, ""},
		{`{"limit":5.0,"period":"1s"}`, Pace{5, "1s"}, ""},
		{`{"limit":0,"period":"1s"}`, Pace{0, "1s"}, "rate_limit.limit:parameter_invalid"},
		{`{"limit":1001,"period":"1s"}`, Pace{0, "1s"}, "rate_limit.limit:parameter_invalid"},
		{`{"limit":-1,"period":"1s"}`, Pace{0, "1s"}, "rate_limit.limit:parameter_invalid"},
		{`{"limit":2.5,"period":"1s"}`, Pace{0, "1s"}, "rate_limit.limit:parameter_invalid"},
		{`{"limit":1e999,"period":"1s"}`, Pace{0, "1s"}, "rate_limit.limit:parameter_invalid"},
		{`{"limit":"5","period":"1s"}`, Pace{0, "1s"}, "rate_limit.limit:parameter_invalid"},
		{`{"limit":5,"period":"1h"}`, Pace{5, "1h"}, "rate_limit.period:parameter_invalid"},
		{`{"limit":5,"period":"60s"}`, Pace{5, "60s"}, "rate_limit.period:parameter_invalid"},
		{`{"limit":5,"period":5}`, Pace{5, ""}, "rate_limit.period:parameter_invalid"},
		{`{"limit":5,"period":"1s\u0000"}`, Pace{5, "1s\x00"}, "rate_limit.period:invalid_string"},
		{`{"limit":5}`, Pace{5, ""}, "rate_limit.period:parameter_missing"},
		{`{"period":"1s"}`, Pace{0, "1s"}, "rate_limit.limit:parameter_missing"},
		{`{}`, Pace{}, "rate_limit.limit:parameter_missing,rate_limit.period:parameter_missing"},
		{`5`, Pace{}, "rate_limit:parameter_invalid"},
		{`"5/1s"`, Pace{}, "rate_limit:parameter_invalid"},
		{`[5,"1s"]`, Pace{}, "rate_limit:parameter_invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			var fs apperr.Faults
			got := checkRateLimit(&fs, json.RawMessage(tt.raw))
			var codes []string
			for _, f := range fs {
				codes = append(codes, f.Param+":"+f.Code)
			}
			if strings.Join(codes, ",") != tt.faults {
				t.Fatalf("faults %v, want %s", codes, tt.faults)
			}
			if tt.faults == "" && got != tt.want {
				t.Fatalf("pace %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPacedRate: the weight of an endpoint's key is its rate in per-second units.
func TestPacedRate(t *testing.T) {
	for _, tt := range []struct {
		ep   models.WebhookEndpoint
		want float64
	}{
		{models.WebhookEndpoint{}, 0},
		{models.WebhookEndpoint{RateLimit: 5, RatePeriod: "1s"}, 5},
		{models.WebhookEndpoint{RateLimit: 30, RatePeriod: "1m"}, 0.5},
		{models.WebhookEndpoint{RateLimit: 1, RatePeriod: "1m"}, 1.0 / 60},
	} {
		if got := tt.ep.PacedRate(); got != tt.want {
			t.Errorf("%d/%s: %v, want %v", tt.ep.RateLimit, tt.ep.RatePeriod, got, tt.want)
		}
	}
	// Validation of a whole create: rate_limit is optional, and kept.
	raw := json.RawMessage(`{"limit":5,"period":"1m"}`)
	u := "https://example.com/h"
	p, err := ValidateEndpointFields(EndpointFields{URL: &u, RateLimit: &raw}, true, models.DefaultRetryPolicy, "")
	if err != nil || p.Pace == nil || *p.Pace != (Pace{5, "1m"}) {
		t.Fatalf("patch %+v, %v", p.Pace, err)
	}
	if _, err := ValidateEndpointFields(EndpointFields{URL: &u}, true, models.DefaultRetryPolicy, ""); err != nil {
		t.Fatal(err)
	}
	var verr *apperr.ValidationError
	bad := json.RawMessage(`{"limit":0,"period":"1s"}`)
	if _, err := ValidateEndpointFields(EndpointFields{URL: &u, RateLimit: &bad}, true, models.DefaultRetryPolicy, ""); !errors.As(err, &verr) {
		t.Fatalf("a limit of 0 was accepted: %v", err)
	}
}
