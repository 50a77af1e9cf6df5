package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/revops/revops/models"
)

const chromiumPath = "/usr/bin/chromium"

// screenshotDir is where the browser tests keep the documentation's screenshots current.
var screenshotDir = filepath.Join("..", "..", "docs", "screenshots")

// newBrowser starts a headless Chromium with a fresh profile. Without Chromium the test
// fails in CI (CI=true) and skips locally.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: the browser tests need Chromium (scripts/test installs it with apt-get)", chromiumPath)
		}
		t.Skipf("%s is missing: skipping the browser test (install Debian's chromium, or run ./scripts/test)", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelCtx := chromedp.NewContext(actx)
	// The first action starts the browser; it must not run under the timeout, which would
	// stop the browser when it ends. Later actions run under it.
	if err := chromedp.Do(bctx); err != nil {
		cancelCtx()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(bctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// run executes browser actions and fails the test with the step's name on error.
func run(t *testing.T, ctx context.Context, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("%s (at %s): %v", step, loc, err)
	}
}

// value runs one action that returns a value, failing the test on error.
func value[T any](t *testing.T, ctx context.Context, step string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	return v
}

type css = chromedp.CSS

// screenshot takes the whole page every run (so a page that cannot render fails the test)
// and saves it as docs/screenshots/<name>.png when REVOPS_SCREENSHOTS=1, so the
// documentation is refreshed on purpose rather than by every test run.
func screenshot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		png, err := chromedp.FullScreenshot(100)(ctx, t)
		if err != nil {
			return err
		}
		if os.Getenv("REVOPS_SCREENSHOTS") != "1" {
			return nil
		}
		if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(screenshotDir, name+".png"), png, 0o644)
	})
}

// whoami calls GET /v1/whoami with key from Go, as an API client would.
func whoami(t *testing.T, base, key string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/v1/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res.StatusCode, body
}

func TestBrowserLoginEnvironmentAndKeys(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme Corp", "owner@acme.test")
	ctx := newBrowser(t)
	base := s.srv.URL

	run(t, ctx, "open the dashboard without a session",
		chromedp.Navigate(base+"/dashboard/api-keys"),
		chromedp.WaitVisible(css(`input[name="email"]`)),
		screenshot("login"),
	)
	loc := value(t, ctx, "location", chromedp.Location())
	if loc != base+"/dashboard/login" {
		t.Fatalf("without a session the dashboard went to %s, want the login page", loc)
	}
	run(t, ctx, "sign in",
		chromedp.SendKeys(css(`input[name="email"]`), u.email),
		chromedp.SendKeys(css(`input[name="password"]`), u.password),
		chromedp.Click(css(`form button.primary`)),
		chromedp.WaitVisible(css(`#create-key`)),
		chromedp.WaitVisible(css(`.sandbox-banner`)),
	)
	run(t, ctx, "switch to live",
		chromedp.Click(css(`button.seg-live`)),
		chromedp.WaitVisible(css(`.live-banner`)),
		screenshot("api-keys-live"),
	)
	run(t, ctx, "switch to sandbox",
		chromedp.Click(css(`button.seg-sandbox`)),
		chromedp.WaitVisible(css(`.sandbox-banner`)),
	)
	if value(t, ctx, "look for the live banner", chromedp.Evaluate[bool](`!!document.querySelector('.live-banner')`)) {
		t.Fatal("the LIVE banner is shown in sandbox")
	}

	run(t, ctx, "create a secret key",
		chromedp.SetValue(css(`#key-type`), "secret"),
		chromedp.Click(css(`#create-key`)),
		chromedp.WaitVisible(css(`#new-key`)),
		screenshot("api-key-created"),
	)
	key := value(t, ctx, "read the new key", chromedp.Value(css(`#new-key`)))
	copyHidden := value(t, ctx, "copy button", chromedp.Evaluate[bool](`document.querySelector('button.copy').hidden`))
	if !strings.HasPrefix(key, "sk_sandbox_") {
		t.Fatalf("new key %q, want sk_sandbox_…", key)
	}
	if copyHidden {
		t.Error("the copy button stays hidden although JavaScript and the Clipboard API are available")
	}
	status, who := whoami(t, base, key)
	if status != http.StatusOK || who["environment"] != "sandbox" || who["type"] != "secret" {
		t.Fatalf("whoami with the key read from the page: %d %v", status, who)
	}

	run(t, ctx, "revoke the key with the no-JS confirmation step",
		chromedp.Navigate(base+"/dashboard/api-keys"),
		chromedp.Click(css(`a.danger-link`)),
		chromedp.WaitVisible(css(`input[name="confirm"]`)),
		screenshot("api-key-revoke"),
		chromedp.Click(css(`input[name="confirm"]`)),
		chromedp.Click(css(`button.danger`)),
		chromedp.WaitVisible(css(`.notice`)),
		chromedp.WaitVisible(css(`.state-revoked`)),
		screenshot("api-keys"),
	)
	if status, _ := whoami(t, base, key); status != http.StatusUnauthorized {
		t.Fatalf("whoami with the revoked key: %d, want 401", status)
	}
}

// browserLogin signs u in through the login form.
func browserLogin(t *testing.T, ctx context.Context, base string, u user) {
	t.Helper()
	run(t, ctx, "sign in",
		chromedp.Navigate(base+"/dashboard/login"),
		chromedp.SendKeys(css(`input[name="email"]`), u.email),
		chromedp.SendKeys(css(`input[name="password"]`), u.password),
		chromedp.Click(css(`form button.primary`)),
		chromedp.WaitVisible(css(`#create-key`)),
	)
}

func TestBrowserWebhooksAndDeliveries(t *testing.T) {
	rcv, s, u, env := newOwnerSite(t, "Acme Corp")
	ctx := newBrowser(t)
	base := s.srv.URL
	browserLogin(t, ctx, base, u)

	run(t, ctx, "a plain-HTTP URL is refused inline",
		chromedp.Navigate(base+"/dashboard/webhooks"),
		chromedp.Click(css(`#add-endpoint`)),
		chromedp.WaitVisible(css(`#endpoint-url`)),
		chromedp.SetValue(css(`#endpoint-url`), "http://hooks.example.com/revops"),
		chromedp.Click(css(`#save-endpoint`)),
		chromedp.WaitVisible(css(`#url-error`)),
		screenshot("webhooks-invalid"),
	)
	run(t, ctx, "add an endpoint with two event types",
		chromedp.SetValue(css(`#endpoint-url`), rcv.srv.URL+"/billing"),
		chromedp.SetValue(css(`#endpoint-description`), "Billing"),
		chromedp.Click(css(`#type-all`)), // untick "*"
		chromedp.Click(css(`#type-deal-signed`)),
		chromedp.Click(css(`#type-account-created`)),
		chromedp.Click(css(`#save-endpoint`)),
		chromedp.WaitVisible(css(`.notice`)),
		chromedp.Click(css(`#reveal-secret`)),
		chromedp.WaitVisible(css(`#webhook-secret`)),
	)
	eps := s.endpoints(env)
	if len(eps) != 1 || !slices.Equal(eps[0].EventTypes, []string{"deal-signed", "account-created"}) || eps[0].Description != "Billing" {
		t.Fatalf("endpoints after the add: %+v", eps)
	}
	billing := eps[0]
	if secret := value(t, ctx, "read the secret", chromedp.Value(css(`#webhook-secret`))); secret != billing.Secret {
		t.Fatalf("revealed secret %q", secret)
	}
	run(t, ctx, "send a test event",
		chromedp.SetValue(css(`#test-type`), "deal-signed"),
		chromedp.Click(css(`#send-test`)),
		chromedp.WaitVisible(css(`#test-result`)),
		screenshot("endpoint"),
	)
	result := value(t, ctx, "read the outcome", chromedp.Text(css(`#test-result`)))
	if !strings.Contains(result, "PASS") || !strings.Contains(result, "200") || rcv.count() != 1 {
		t.Fatalf("test outcome %q, receiver got %d requests", result, rcv.count())
	}
	run(t, ctx, "edit it: a new description, 3 attempts",
		chromedp.SetValue(css(`#endpoint-description`), "Billing (EU)"),
		chromedp.SetValue(css(`#retry-maximum_attempts`), "3"),
		chromedp.Click(css(`#save-endpoint`)),
		chromedp.WaitVisible(css(`.notice`)),
	)
	if ep := s.endpoints(env)[0]; ep.Description != "Billing (EU)" || ep.MaximumAttempts != 3 || len(ep.EventTypes) != 2 {
		t.Fatalf("after the edit: %+v", ep)
	}
	run(t, ctx, "add a second endpoint for every type",
		chromedp.Navigate(base+"/dashboard/webhooks/new"),
		chromedp.SetValue(css(`#endpoint-url`), rcv.srv.URL+"/crm"),
		chromedp.SetValue(css(`#endpoint-description`), "CRM"),
		chromedp.Click(css(`#save-endpoint`)),
		chromedp.WaitVisible(css(`.notice`)),
	)
	crm := s.endpoints(env)[1]

	// Events: Billing delivers, CRM fails long enough to be disabled.
	key, err := s.keys.Create(context.Background(), u.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	var events []models.Event
	for _, name := range []string{"Globex", "Initech", "Umbrella"} {
		e := s.createAccount(key.Plain, name)
		events = append(events, e)
		s.endDelivery(e, s.deliveryTo(e, billing.ID), models.AttemptSucceeded, time.Now().UTC(), 0)
	}
	s.endDelivery(events[0], s.deliveryTo(events[0], crm.ID), models.AttemptFailed, time.Now().UTC(), time.Nanosecond)

	crmCard := `section[data-endpoint-id="` + crm.ID + `"]`
	run(t, ctx, "see the charts and the disabled banner",
		chromedp.Navigate(base+"/dashboard/webhooks"),
		chromedp.WaitVisible(css(crmCard+` .failing-banner`)),
		chromedp.WaitVisible(css(`section[data-endpoint-id="`+billing.ID+`"] svg.week-chart rect.bar-succeeded`)),
		chromedp.WaitVisible(css(crmCard+` svg.week-chart rect.bar-failed`)),
		screenshot("webhooks"),
	)
	rate := value(t, ctx, "Billing's success rate", chromedp.Text(css(`section[data-endpoint-id="`+billing.ID+`"] .success-rate`)))
	banner := value(t, ctx, "CRM's banner", chromedp.Text(css(crmCard+` .failing-banner`)))
	p95 := value(t, ctx, "Billing's p95", chromedp.Text(css(`section[data-endpoint-id="`+billing.ID+`"] .p95`)))
	health := value(t, ctx, "Billing's health", chromedp.Text(css(`section[data-endpoint-id="`+billing.ID+`"] .health`)))
	crmHealth := value(t, ctx, "CRM's health", chromedp.Text(css(crmCard+` .health`)))
	if !strings.HasPrefix(rate, "100 %") || !strings.Contains(banner, "Disabled (failing since ") || p95 != "≤ 100 ms" ||
		!strings.HasPrefix(health, "healthy") || !strings.Contains(health, "last success") ||
		!strings.HasPrefix(crmHealth, "disabled") || !strings.Contains(crmHealth, "failing since") {
		t.Fatalf("rate %q, banner %q, p95 %q, health %q and %q", rate, banner, p95, health, crmHealth)
	}
	run(t, ctx, "re-enable CRM",
		chromedp.Click(css(crmCard+` .failing-banner button.reenable`)),
		chromedp.WaitVisible(css(`.notice`)),
	)
	if value(t, ctx, "look for the banner", chromedp.Evaluate[bool](`!!document.querySelector('.failing-banner')`)) {
		t.Fatal("the banner stays after re-enabling")
	}
	if ep, _ := s.store.WebhookEndpointByID(context.Background(), env, crm.ID); !ep.Enabled {
		t.Fatal("CRM is still disabled")
	}

	run(t, ctx, "Billing's deliveries alone: the endpoint filter without a status",
		chromedp.Navigate(base+"/dashboard/deliveries"),
		chromedp.SetValue(css(`#endpoint-filter`), billing.ID),
		chromedp.Click(css(`#filter-deliveries`)),
		chromedp.WaitReady(css(`#endpoint-filter option[value="`+billing.ID+`"][selected]`)),
		chromedp.WaitVisible(css(`tr[data-event-id="`+events[2].ID+`"]`)),
	)
	if n := value(t, ctx, "rows", chromedp.Evaluate[int](`document.querySelectorAll('tr[data-event-id]').length`)); n != len(events) {
		t.Fatalf("%d events listed for Billing, want %d", n, len(events))
	}
	seeAndReplayDelivery(t, ctx, base, events[0], crm)
	deleteEndpoint(t, ctx, base, s, env, crm)
	// A deleted endpoint's id in the filter (a bookmark): the page says so, keeps the
	// filter, and lists the deliveries it left.
	run(t, ctx, "filter by the deleted endpoint",
		chromedp.Navigate(base+"/dashboard/deliveries?endpoint_id="+crm.ID),
		chromedp.WaitVisible(css(`p.error`)),
		chromedp.WaitReady(css(`#endpoint-filter option[value="`+crm.ID+`"][selected]`)),
		chromedp.WaitVisible(css(`tr[data-event-id="`+events[0].ID+`"]`)),
	)
	if msg := value(t, ctx, "the message", chromedp.Text(css(`p.error`))); !strings.Contains(msg, "No endpoint "+crm.ID+" in sandbox") {
		t.Fatalf("message %q", msg)
	}
}

// seeAndReplayDelivery filters the list by the endpoint whose delivery of e failed,
// opens e and replays that delivery only.
func seeAndReplayDelivery(t *testing.T, ctx context.Context, base string, e models.Event, ep models.WebhookEndpoint) {
	t.Helper()
	row := `tr[data-event-id="` + e.ID + `"]`
	run(t, ctx, "filter the deliveries by endpoint",
		chromedp.Navigate(base+"/dashboard/deliveries"),
		chromedp.SetValue(css(`#endpoint-filter`), ep.ID),
		chromedp.SetValue(css(`#status-filter`), models.EventFailed),
		chromedp.Click(css(`#filter-deliveries`)),
		// Only the filtered page, rendered by the server, marks the option selected.
		chromedp.WaitReady(css(`#endpoint-filter option[value="`+ep.ID+`"][selected]`)),
		chromedp.WaitVisible(css(row)),
		screenshot("deliveries"),
	)
	if n := value(t, ctx, "rows", chromedp.Evaluate[int](`document.querySelectorAll('tr[data-event-id]').length`)); n != 1 {
		t.Fatalf("%d events listed for CRM's failed deliveries, want 1", n)
	}
	card := `section.delivery[data-endpoint-id="` + ep.ID + `"]`
	run(t, ctx, "open the event and replay CRM's delivery",
		chromedp.Click(css(row+` a`)),
		chromedp.WaitVisible(css(card+` table.attempts`)),
		chromedp.Click(css(card+` button.replay-endpoint`)),
		chromedp.WaitVisible(css(`.notice`)),
		screenshot("delivery"),
	)
	if st := value(t, ctx, "CRM's delivery after the replay", chromedp.Text(css(card+` h2 .state`))); st != models.EventPending {
		t.Fatalf("CRM's delivery %q after the replay, want pending", st)
	}
}

// deleteEndpoint deletes ep through its confirmation page.
func deleteEndpoint(t *testing.T, ctx context.Context, base string, s *site, env models.Env, ep models.WebhookEndpoint) {
	t.Helper()
	run(t, ctx, "delete with confirmation",
		chromedp.Navigate(base+"/dashboard/webhooks"),
		chromedp.Click(css(`section[data-endpoint-id="`+ep.ID+`"] a.delete-endpoint`)),
		chromedp.WaitVisible(css(`#confirm-delete`)),
		screenshot("endpoint-delete"),
		chromedp.Click(css(`#confirm-delete`)),
		chromedp.Click(css(`#delete-endpoint`)),
		chromedp.WaitVisible(css(`.notice`)),
	)
	for _, left := range s.endpoints(env) {
		if left.ID == ep.ID {
			t.Fatal("the endpoint is still there")
		}
	}
	if value(t, ctx, "look for its card", chromedp.Evaluate[bool](`!!document.querySelector('section[data-endpoint-id="`+ep.ID+`"]')`)) {
		t.Fatal("the deleted endpoint is still listed")
	}
}
