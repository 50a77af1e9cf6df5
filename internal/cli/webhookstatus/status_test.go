package webhookstatus_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/cli/webhookstatus"
	"github.com/revops/revops/internal/testkit/cliapitest"
)

// The table shows health as the API gives it, "—" for what it lacks, and keeps every
// field from the API on its own cell: a description's escape sequence is not written
// to the terminal.
func TestPrint(t *testing.T) {
	rate := 0.25
	since := time.Date(2026, 11, 27, 15, 4, 0, 0, time.UTC)
	p95 := 250 * time.Millisecond
	var out bytes.Buffer
	err := webhookstatus.Print(&out, []webhookstatus.Row{
		{ID: "ep-1", Description: "Billing\x1b[31m\tred", Host: "hooks.example:8443", Enabled: true, Ordering: "object", Pace: "5/1s",
			Health: &webhookstatus.Health{Status: "failing", SuccessRate24h: &rate, FailingSince: &since}, P95: &p95},
		{ID: "ep-2", Host: "crm.example", DisabledReason: "manual"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a header and two rows:\n%s", out.String())
	}
	for i, want := range [][]string{
		{"ID", "HOST", "ORDERING", "PACE", "HEALTH", "SUCCESS 24H", "LAST SUCCESS", "FAILING SINCE", "P95 24H"},
		{"ep-1", "Billing?[31m?red", "hooks.example:8443", "yes", "object", "5/1s", "failing", "25.0%", "2026-11-27 15:04 UTC", "250ms"},
		{"ep-2", "crm.example", "no (manual)", "—"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d misses %q: %q", i, w, lines[i])
			}
		}
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Error("an escape sequence reached the terminal")
	}
}

// Against the real API: every endpoint of the environment, its host and never its URL's
// path or query (which may hold a token) nor its secret; a new endpoint is idle with no
// success rate, a disabled one disabled (CONTRACT §23: needs the endpoint's health
// object in the API).
func TestStatusOfEndpoints(t *testing.T) {
	ctx := context.Background()
	c, _ := cliapitest.SandboxAPI(t, "--webhook-allow-private")
	var a, b struct{ ID, Secret string }
	if err := c.Do(ctx, http.MethodPost, "/v1/webhook_endpoints",
		map[string]any{"url": "https://127.0.0.1:9/in/tok_s3cr3t?key=k1", "description": "Billing", "ordering": "object",
			"rate_limit": map[string]any{"limit": 90, "period": "1m"}}, &a); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, http.MethodPost, "/v1/webhook_endpoints",
		map[string]any{"url": "https://localhost:8/revops", "description": "CRM"}, &b); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, http.MethodPatch, "/v1/webhook_endpoints/"+b.ID, map[string]any{"enabled": false}, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := webhookstatus.Read(ctx, c, time.Now(), true)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := webhookstatus.Print(&out, rows); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("\n%s", text)
	for _, leak := range []string{"tok_s3cr3t", "key=k1", a.Secret, b.Secret} {
		if strings.Contains(text, leak) {
			t.Errorf("the table shows %q", leak)
		}
	}
	line := func(id string) string {
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, id) {
				return l
			}
		}
		t.Fatalf("no line for %s:\n%s", id, text)
		return ""
	}
	for id, want := range map[string][]string{
		a.ID: {"Billing", "127.0.0.1:9", "yes", "object", "90/1m", "idle", "—"},
		b.ID: {"CRM", "localhost:8", "no (manual)", "none", "disabled"},
	} {
		l := line(id)
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Errorf("%s: the line misses %q: %q", id, w, l)
			}
		}
	}
	for _, r := range rows {
		if r.Health == nil || r.P95 != nil || (r.ID == a.ID && r.Health.SuccessRate24h != nil) {
			t.Errorf("%s: health %+v, p95 %v: want the API's health, no rate and no p95 without attempts", r.ID, r.Health, r.P95)
		}
	}
}

// The success rate reads as the dashboard's (floored to a tenth): never 100 % while an
// attempt failed, and 2 of 11 is 18.1 % on both.
func TestPrintRateFloors(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want string
	}{{9999.0 / 10000, "99.9%"}, {2.0 / 11, "18.1%"}, {0.7, "70.0%"}, {0.29, "29.0%"}, {1, "100.0%"}, {0, "0.0%"}} {
		rate := tc.rate
		var out bytes.Buffer
		if err := webhookstatus.Print(&out, []webhookstatus.Row{{ID: "ep-1", Enabled: true,
			Health: &webhookstatus.Health{Status: "healthy", SuccessRate24h: &rate}}}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), " "+tc.want+" ") {
			t.Errorf("rate %v: want %s in\n%s", tc.rate, tc.want, out.String())
		}
	}
}
