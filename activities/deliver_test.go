package activities_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/models"
)

// fixture is a database, a receiver and activities trusting that receiver only.
type fixture struct {
	db     *webhooktest.DB
	rc     *webhooktest.Receiver
	acts   *activities.Delivery
	secret string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := webhooktest.New(t)
	rc := webhooktest.NewReceiver(t)
	secret, err := signing.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	acts := &activities.Delivery{
		Store: db.Store,
		Sender: &webhook.Sender{
			Client:      webhook.NewClientWithRoots(true, rc.Roots()),
			AckSentence: webhooktest.AckSentence,
			Timeout:     300 * time.Millisecond,
		},
	}
	return &fixture{db: db, rc: rc, acts: acts, secret: secret}
}

func (f *fixture) endpoint(t *testing.T, rawURL, method string, enabled bool) {
	t.Helper()
	_, err := webhook.CreateEndpoint(context.Background(), f.db.Store, f.db.Env,
		models.WebhookEndpoint{URL: rawURL, Method: method, Enabled: enabled, Secret: f.secret}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		t.Fatal(err)
	}
}

// run runs one of f.acts' activities once, as Temporal would.
func (f *fixture) run(activity, input any) (converter.EncodedValue, error) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(f.acts)
	return env.ExecuteActivity(activity, input)
}

// deliver runs the activity once, as Temporal would, with maxAttempts in the input.
func (f *fixture) deliver(t *testing.T, ev models.Event, maxAttempts int32) error {
	t.Helper()
	_, err := f.run(f.acts.DeliverWebhook, activities.DeliverInput{EventID: ev.ID, Trigger: models.TriggerScheduled, MaxAttempts: maxAttempts})
	return err
}

func (f *fixture) attempts(t *testing.T, ev models.Event) []models.DeliveryAttempt {
	t.Helper()
	as, err := f.db.Store.DeliveryAttempts(context.Background(), f.db.Env, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// verifyStandardWebhooks is an independent check of the Standard Webhooks signature,
// written from the specification (not with internal/platform/signing).
func verifyStandardWebhooks(t *testing.T, secret string, h http.Header, body []byte) int {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		t.Fatalf("webhook-timestamp %q is not a current Unix time", ts)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	want := mac.Sum(nil)
	matches := 0
	for _, sig := range strings.Split(h.Get("webhook-signature"), " ") {
		version, b64, _ := strings.Cut(sig, ",")
		got, err := base64.StdEncoding.DecodeString(b64)
		if version == "v1" && err == nil && hmac.Equal(got, want) {
			matches++
		}
	}
	return matches
}

func TestDeliverSuccessPOST(t *testing.T) {
	f := newFixture(t)
	f.endpoint(t, f.rc.URL+"/hooks?src=revops", http.MethodPost, true)
	ev := f.db.Event(t, "deal-signed", map[string]any{"id": "d1", "status": "signed"}, time.Time{})

	if err := f.deliver(t, ev, 6); err != nil {
		t.Fatalf("deliver: %v", err)
	}
	got := f.rc.Received()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(got))
	}
	r := got[0]
	if r.Method != http.MethodPost || string(r.Body) != ev.Payload || r.Query != "src=revops" {
		t.Errorf("got %s ?%s %s, want POST ?src=revops with the stored payload", r.Method, r.Query, r.Body)
	}
	for name, want := range map[string]string{
		"Content-Type": "application/json", "User-Agent": "Revops-Webhooks/1", "webhook-id": ev.ID,
	} {
		if r.Header.Get(name) != want {
			t.Errorf("header %s = %q, want %q", name, r.Header.Get(name), want)
		}
	}
	if n := verifyStandardWebhooks(t, f.secret, r.Header, r.Body); n != 1 {
		t.Errorf("%d valid signatures in %q, want 1", n, r.Header.Get("webhook-signature"))
	}
	if st := f.db.Load(t, ev.ID).Status; st != models.EventDelivered {
		t.Errorf("event status %s, want delivered", st)
	}
	as := f.attempts(t, ev)
	if len(as) != 1 {
		t.Fatalf("%d attempts recorded, want 1", len(as))
	}
	a := as[0]
	if a.Number != 1 || a.Outcome != models.AttemptSucceeded || a.StatusCode != 200 || a.Method != "POST" ||
		a.Trigger != models.TriggerScheduled || a.Error != "" || !strings.Contains(a.ResponseExcerpt, webhooktest.AckSentence) ||
		a.URL != f.rc.URL+"/hooks?src=<redacted>" || a.StartedAt.IsZero() { // query values masked (issue 41)
		t.Errorf("attempt recorded as %+v", a)
	}
}

func TestDeliverGETCarriesPayloadParameter(t *testing.T) {
	f := newFixture(t)
	f.endpoint(t, f.rc.URL+"/hooks?a=1", http.MethodGet, true)
	ev := f.db.Event(t, "deal-created", map[string]any{"id": "d2"}, time.Time{})
	if err := f.deliver(t, ev, 6); err != nil {
		t.Fatalf("deliver: %v", err)
	}
	r := f.rc.Received()[0]
	q, _ := url.ParseQuery(r.Query)
	if r.Method != http.MethodGet || q.Get("payload") != ev.Payload || q.Get("a") != "1" || len(r.Body) != 0 {
		t.Fatalf("got %s ?%s body %q, want GET with payload=<stored JSON> and a=1", r.Method, r.Query, r.Body)
	}
	if r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type = %q", r.Header.Get("Content-Type"))
	}
	if n := verifyStandardWebhooks(t, f.secret, r.Header, []byte(q.Get("payload"))); n != 1 {
		t.Errorf("signature over the payload value does not verify")
	}
}

func TestDeliverGETTooLargeFailsWithoutRetry(t *testing.T) {
	f := newFixture(t)
	f.endpoint(t, f.rc.URL, http.MethodGet, true)
	ev := f.db.Event(t, "deal-updated", map[string]any{"notes": strings.Repeat("x", 17<<10)}, time.Time{})
	err := f.deliver(t, ev, 6)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != webhook.ReasonPayloadTooLarge {
		t.Fatalf("err = %v, want non-retryable payload_too_large_for_get", err)
	}
	if len(f.rc.Received()) != 0 {
		t.Error("an oversized GET was sent")
	}
	if st := f.db.Load(t, ev.ID).Status; st != models.EventFailed {
		t.Errorf("status %s, want failed", st)
	}
}

func TestSignsWithBothSecretsDuringRotation(t *testing.T) {
	f := newFixture(t)
	f.endpoint(t, f.rc.URL, http.MethodPost, true)
	old := f.secret
	next, _ := signing.NewSecret()
	ep, err := f.db.Store.WebhookEndpoint(context.Background(), f.db.Env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := webhook.RotateSecret(context.Background(), f.db.Store, f.db.Env, ep.ID, next, time.Now().UTC(), 24*time.Hour, idempotency.Reply[webhook.SecretObject]{}); err != nil {
		t.Fatal(err)
	}
	ev := f.db.Event(t, "deal-active", map[string]any{"id": "d3"}, time.Time{})
	if err := f.deliver(t, ev, 6); err != nil {
		t.Fatal(err)
	}
	r := f.rc.Received()[0]
	if verifyStandardWebhooks(t, old, r.Header, r.Body) != 1 || verifyStandardWebhooks(t, next, r.Header, r.Body) != 1 {
		t.Fatalf("signature header %q does not carry both secrets' signatures", r.Header.Get("webhook-signature"))
	}
}
