package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/revops/revops/internal/store"
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
	rcv := newReceiver(t, http.StatusOK, "Revops API Event Received.")
	s := newSite(t, rcv.siteArgs()...)
	u := s.newUser("Acme Corp", "owner@acme.test")
	ctx := newBrowser(t)
	// The dashboard with replay buttons; the API (s.srv) still writes the events.
	rp := &fakeReplayer{running: map[string]bool{}, store: s.store}
	base := s.dashboardWith(rp)
	browserLogin(t, ctx, base, u)

	run(t, ctx, "a plain-HTTP URL is refused inline",
		chromedp.Navigate(base+"/dashboard/webhooks"),
		chromedp.SetValue(css(`#webhook-url`), "http://hooks.example.com/revops"),
		chromedp.Click(css(`#save-webhook`)),
		chromedp.WaitVisible(css(`#url-error`)),
		screenshot("webhooks-invalid"),
	)
	run(t, ctx, "save the receiver's URL",
		chromedp.SetValue(css(`#webhook-url`), rcv.srv.URL+"/revops"),
		chromedp.SetValue(css(`#webhook-method`), "POST"),
		chromedp.Click(css(`#save-webhook`)),
		chromedp.WaitVisible(css(`.notice`)),
		chromedp.Click(css(`#reveal-secret`)),
		chromedp.WaitVisible(css(`#webhook-secret`)),
	)
	secret := value(t, ctx, "read the secret", chromedp.Value(css(`#webhook-secret`)))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("revealed secret %q", secret)
	}
	run(t, ctx, "send a test event",
		chromedp.SetValue(css(`#test-type`), "deal-signed"),
		chromedp.Click(css(`#send-test`)),
		chromedp.WaitVisible(css(`#test-result`)),
		screenshot("webhooks"),
	)
	result := value(t, ctx, "read the outcome", chromedp.Text(css(`#test-result`)))
	if !strings.Contains(result, "PASS") || !strings.Contains(result, "200") || rcv.count() != 1 {
		t.Fatalf("test outcome %q, receiver got %d requests", result, rcv.count())
	}

	key, err := s.keys.Create(context.Background(), u.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	e := s.createAccount(key.Plain, "Globex")
	s.failAttempts(e, 2)
	seeAndReplayDelivery(t, ctx, base, e)
	if len(rp.one) != 1 || rp.one[0] != e.ID {
		t.Fatalf("replayer calls after the Replay button: %v", rp.one)
	}

	failed := s.createAccount(key.Plain, "Initech")
	s.failAttempts(failed, 3)
	if err := s.store.SetEventStatus(context.Background(), store.EnvOf(failed), failed.ID, models.EventFailed); err != nil {
		t.Fatal(err)
	}
	replayAllFailed(t, ctx, base, failed)
}

// seeAndReplayDelivery opens the retrying event e from the list, replays it and checks
// the page shows the replay: notice, back to pending, the new run in the Temporal link.
func seeAndReplayDelivery(t *testing.T, ctx context.Context, base string, e models.Event) {
	t.Helper()
	row := `tr[data-event-id="` + e.ID + `"]`
	run(t, ctx, "see the delivery",
		chromedp.Navigate(base+"/dashboard/deliveries"),
		chromedp.WaitVisible(css(row)),
		chromedp.Click(css(row+` a`)),
		chromedp.WaitVisible(css(`table.attempts`)),
	)
	link := value(t, ctx, "temporal link", chromedp.AttributeValue(css(`#temporal-link`), "href"))
	if !strings.Contains(link.Value, "/workflows/webhook-"+e.ID+"/run-1/history") {
		t.Fatalf("Temporal UI link %q", link.Value)
	}
	if st := value(t, ctx, "status before the replay", chromedp.Text(css(`h1 .state`))); st != models.EventRetrying {
		t.Fatalf("status before the replay %q, want retrying", st)
	}
	run(t, ctx, "replay it",
		chromedp.Click(css(`#replay-event`)),
		chromedp.WaitVisible(css(`.notice`)),
		chromedp.WaitVisible(css(`table.attempts`)),
		screenshot("delivery"),
	)
	notice := value(t, ctx, "replay notice", chromedp.Text(css(`.notice`)))
	status := value(t, ctx, "status after the replay", chromedp.Text(css(`h1 .state`)))
	link = value(t, ctx, "temporal link after the replay", chromedp.AttributeValue(css(`#temporal-link`), "href"))
	if !strings.Contains(notice, "Replay started") || status != models.EventPending ||
		!strings.Contains(link.Value, "/workflows/webhook-"+e.ID+"/replay-1/history") {
		t.Fatalf("after the replay: notice %q, status %q, Temporal link %q", notice, status, link.Value)
	}
}

// replayAllFailed clicks "Replay all failed" on the list, where failed is the one failed
// event, and checks the job's notice and that the event went back to pending.
func replayAllFailed(t *testing.T, ctx context.Context, base string, failed models.Event) {
	t.Helper()
	state := `tr[data-event-id="` + failed.ID + `"] .state`
	run(t, ctx, "see the failed event",
		chromedp.Navigate(base+"/dashboard/deliveries"),
		chromedp.WaitVisible(css(state)),
	)
	if st := value(t, ctx, "failed event's status", chromedp.Text(css(state))); st != models.EventFailed {
		t.Fatalf("status of the failed event %q", st)
	}
	run(t, ctx, "replay all failed",
		chromedp.Click(css(`#replay-failed`)),
		chromedp.WaitVisible(css(`.notice`)),
		chromedp.WaitVisible(css(state)),
		screenshot("deliveries"),
	)
	notice := value(t, ctx, "job notice", chromedp.Text(css(`.notice`)))
	status := value(t, ctx, "status after replaying all failed", chromedp.Text(css(state)))
	if notice != "Replay started for 1 failed event(s)." || status != models.EventPending {
		t.Fatalf("after replaying all failed: notice %q, status %q", notice, status)
	}
}
