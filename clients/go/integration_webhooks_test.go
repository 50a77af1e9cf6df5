package revops

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// endpointDescription marks the endpoints this suite makes, so that a later run can
// remove those a crashed run left (an environment holds at most 16).
const endpointDescription = "clients/go integration test"

func skipWithoutWebhooks(t *testing.T) {
	if os.Getenv("REVOPS_TEST_SKIP_WEBHOOKS") == "1" {
		t.Skip("REVOPS_TEST_SKIP_WEBHOOKS=1: this server cannot deliver to a receiver on 127.0.0.1")
	}
}

// receiver is an HTTPS webhook receiver on 127.0.0.1 that acknowledges every delivery.
type receiver struct {
	srv        *httptest.Server
	deliveries chan delivery
}

type delivery struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{deliveries: make(chan delivery, 256)}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case rc.deliveries <- delivery{header: r.Header.Clone(), body: body}:
		default: // a full channel only loses deliveries no test waits for
		}
		_, _ = io.WriteString(w, "Revops API Event Received.")
	}))
	// A certificate the server already trusts (the repository's test runner issues one
	// from revops dev's local CA), else httptest's own (REVOPS_WEBHOOK_CA_FILE).
	if crt, key := os.Getenv("REVOPS_TEST_RECEIVER_CERT"), os.Getenv("REVOPS_TEST_RECEIVER_KEY"); crt != "" && key != "" {
		pair, err := tls.LoadX509KeyPair(crt, key)
		if err != nil {
			t.Fatalf("receiver certificate: %v", err)
		}
		rc.srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	}
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

// await returns the first delivery that verifies and that match accepts.
func (rc *receiver) await(t *testing.T, hooks *Webhooks, match func(*WebhookEvent) bool) (*WebhookEvent, delivery) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case d := <-rc.deliveries:
			ev, err := hooks.Verify(d.header, d.body)
			if errors.Is(err, ErrWebhookSignature) || errors.Is(err, ErrWebhookTimestamp) || errors.Is(err, ErrWebhookHeaders) {
				t.Fatalf("a delivery failed verification: %v", err)
			}
			if err == nil && match(ev) {
				return ev, d
			}
		case <-timeout:
			t.Fatalf("no matching delivery within 60 s: does the server trust the receiver's certificate (%s, or REVOPS_TEST_RECEIVER_CERT)?", receiverCAFile)
		}
	}
}

// newEndpoint registers an endpoint and deletes it when the test ends.
func newEndpoint(t *testing.T, c *Client, ctx context.Context, url string, types ...EndpointEventType) *Endpoint {
	t.Helper()
	removeLeftoverEndpoints(t, c, ctx)
	ep, err := c.CreateWebhookEndpoint(ctx, &EndpointCreate{
		URL: url, Description: Value(endpointDescription + " " + unique("ep")), EventTypes: types,
		RetryPolicy: &RetryPolicyInput{InitialInterval: String("1s"), MaximumInterval: String("2s"), MaximumAttempts: Int64(3)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.DeleteWebhookEndpoint(context.Background(), ep.ID) })
	return ep
}

func removeLeftoverEndpoints(t *testing.T, c *Client, ctx context.Context) {
	for ep, err := range c.ListWebhookEndpointsAll(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ep.Description != nil && strings.HasPrefix(*ep.Description, endpointDescription) && time.Since(ep.CreatedAt) > 10*time.Minute {
			_, _ = c.DeleteWebhookEndpoint(ctx, ep.ID)
		}
	}
}

func TestIntegrationWebhookEndpoints(t *testing.T) {
	skipWithoutWebhooks(t)
	c := liveClient(t)
	ctx := testCtx(t)
	rc := newReceiver(t)
	ep := newEndpoint(t, c, ctx, rc.srv.URL+"/hooks", EndpointEventTypeDealSigned)
	if !strings.HasPrefix(ep.Secret, "whsec_") || ep.Status != EndpointStatusEnabled || ep.RetryPolicy.MaximumAttempts != 3 {
		t.Fatalf("created %+v", ep)
	}
	if got, err := c.GetWebhookEndpointByID(ctx, ep.ID); err != nil || got.Secret != "" || got.URL != ep.URL {
		t.Fatalf("read %+v %v (the secret shows only at creation)", got, err)
	}
	found := false
	for e, err := range c.ListWebhookEndpointsAll(ctx, &ListWebhookEndpointsParams{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		found = found || e.ID == ep.ID
	}
	if !found {
		t.Fatal("the endpoint is not listed")
	}
	off, err := c.UpdateWebhookEndpoint(ctx, ep.ID, &EndpointUpdate{Enabled: Bool(false)})
	if err != nil || off.Status != EndpointStatusDisabled || off.DisabledReason == nil || *off.DisabledReason != EndpointDisabledReasonManual {
		t.Fatalf("disabled %+v %v", off, err)
	}
	on, err := c.UpdateWebhookEndpoint(ctx, ep.ID, &EndpointUpdate{Enabled: Bool(true), EventTypes: []EndpointEventType{EndpointEventTypeDealSigned, EndpointEventTypeDealActive}})
	if err != nil || !on.Enabled || len(on.EventTypes) != 2 {
		t.Fatalf("re-enabled %+v %v", on, err)
	}
	secret, err := c.GetWebhookEndpointSecret(ctx, ep.ID)
	if err != nil || secret.Secret != ep.Secret {
		t.Fatalf("secret %v", err)
	}
	rotated, err := c.RotateWebhookEndpointSecret(ctx, ep.ID)
	if err != nil || rotated.Secret == ep.Secret || rotated.PreviousSecretExpiresAt == nil {
		t.Fatalf("rotated %+v %v", rotated, err)
	}
	res, err := c.TestWebhookEndpointByID(ctx, ep.ID, &WebhookTestRequest{Type: TestEventTypeDealSigned})
	if err != nil || !res.OK || res.StatusCode == nil || *res.StatusCode != 200 {
		t.Fatalf("test send %+v %v", res, err)
	}
	// The singular §8 routes act on the environment's oldest endpoint, which may belong
	// to another suite: only read them.
	if _, err := c.GetWebhookEndpoint(ctx); err != nil {
		wantAPIError(t, err, 404, "resource_missing")
	}
	if _, err := c.GetWebhookSecret(ctx); err != nil {
		wantAPIError(t, err, 404, "resource_missing")
	}
	del, err := c.DeleteWebhookEndpoint(ctx, ep.ID)
	if err != nil || !del.Deleted {
		t.Fatalf("deleted %+v %v", del, err)
	}
	_, err = c.GetWebhookEndpointByID(ctx, ep.ID)
	wantAPIError(t, err, 404, "resource_missing")
}

// TestIntegrationWebhookReceivedAndVerified makes a change, receives its delivery on
// 127.0.0.1, verifies it with the endpoint's secret, then replays it, alone and in bulk.
func TestIntegrationWebhookReceivedAndVerified(t *testing.T) {
	skipWithoutWebhooks(t)
	c := liveClient(t)
	ctx := testCtx(t)
	start := time.Now().Add(-time.Second)
	rc := newReceiver(t)
	ep := newEndpoint(t, c, ctx, rc.srv.URL+"/hooks", EndpointEventTypeAccountCreated)
	hooks, err := NewWebhooks(ep.Secret)
	if err != nil {
		t.Fatal(err)
	}
	ext := unique("go-hook")
	acct, err := c.CreateAccount(ctx, &AccountCreate{Name: "Go webhook " + ext, ExternalID: Value(ext)})
	if err != nil {
		t.Fatal(err)
	}
	ofAccount := func(ev *WebhookEvent) bool { return ev.Account != nil && ev.Account.ID == acct.ID }
	ev, d := rc.await(t, hooks, ofAccount)
	if ev.Event.Type != EventTypeAccountCreated || ev.Account.Name != acct.Name || d.header.Get("webhook-id") != ev.Event.ID {
		t.Fatalf("delivery %+v (webhook-id %s)", ev, d.header.Get("webhook-id"))
	}
	if at, err := ev.Event.Timestamp(); err != nil || time.Since(at) > time.Minute {
		t.Fatalf("event time %v %v", at, err)
	}

	// The event records the delivery to our endpoint, and its payload is the body.
	waitDelivered(t, c, ctx, ev.Event.ID, ep.ID)
	stored, err := c.GetEvent(ctx, ev.Event.ID)
	if err != nil {
		t.Fatal(err)
	}
	if payload, err := stored.WebhookEvent(); err != nil || payload.Account == nil || payload.Account.ID != acct.ID {
		t.Fatalf("stored payload %+v %v", payload, err)
	}
	// Its attempt counts in the endpoint's stats, written with the attempt's record.
	hour := time.Now().UTC().Truncate(time.Hour)
	stats, err := c.GetWebhookEndpointStats(ctx, ep.ID, &GetWebhookEndpointStatsParams{
		From: hour.Add(-time.Hour), To: hour.Add(time.Hour), Window: EndpointStatsWindowHour})
	if err != nil {
		t.Fatal(err)
	}
	var succeeded int64
	for _, w := range stats.Data {
		succeeded += w.Succeeded
	}
	if stats.EndpointID != ep.ID || succeeded < 1 {
		t.Fatalf("stats %+v: want the delivered attempt counted", stats)
	}

	// A replay to our endpoint comes again with the same event id.
	if _, err := c.ReplayEvent(ctx, ev.Event.ID, &EventReplayOne{EndpointID: &ep.ID}); err != nil {
		t.Fatal(err)
	}
	again, _ := rc.await(t, hooks, ofAccount)
	if again.Event.ID != ev.Event.ID {
		t.Fatalf("the replay came as event %s, not %s", again.Event.ID, ev.Event.ID)
	}
	waitDelivered(t, c, ctx, ev.Event.ID, ep.ID)

	// A bulk replay of our endpoint's account-created deliveries since the test began.
	var job *ReplayJob
	for deadline := time.Now().Add(30 * time.Second); ; {
		job, err = c.ReplayEvents(ctx, &EventReplayFilter{EndpointID: &ep.ID, Type: Ptr(EventTypeAccountCreated), CreatedAfter: Value(start)})
		var apiErr *Error
		if errors.As(err, &apiErr) && apiErr.Code == "replay_job_limit" && time.Now().Before(deadline) {
			time.Sleep(time.Second) // two jobs of another run are still going
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	for deadline := time.Now().Add(90 * time.Second); job.Status != ReplayJobStatusDone; time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("replay job still %s", job.Status)
		}
		if job, err = c.GetReplayJob(ctx, job.ID); err != nil {
			t.Fatal(err)
		}
	}
	if job.Matched < 1 || job.Filter.EndpointID != ep.ID {
		t.Fatalf("replay job %+v", job)
	}
	rc.await(t, hooks, ofAccount)
}

func waitDelivered(t *testing.T, c *Client, ctx context.Context, eventID, endpointID string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ev, err := c.GetEvent(ctx, eventID)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ev.Deliveries {
			if d.EndpointID == endpointID && d.Status == EventStatusDelivered {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("event %s: no delivered delivery to %s: %+v", eventID, endpointID, ev.Deliveries)
		}
	}
}

// TestIntegrationWebhookEd25519 verifies an ed25519 endpoint's v1a deliveries with its
// public key (CONTRACT §25), before and after a rotation: for 24 h a delivery carries a
// signature under each key, so both public keys verify it.
func TestIntegrationWebhookEd25519(t *testing.T) {
	skipWithoutWebhooks(t)
	c := liveClient(t)
	ctx := testCtx(t)
	rc := newReceiver(t)
	removeLeftoverEndpoints(t, c, ctx)
	ep, err := c.CreateWebhookEndpoint(ctx, &EndpointCreate{
		URL: rc.srv.URL + "/hooks", Description: Value(endpointDescription + " " + unique("ed")),
		EventTypes: []EndpointEventType{EndpointEventTypeAccountCreated}, Signing: Ptr(EndpointSigningEd25519),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.DeleteWebhookEndpoint(context.Background(), ep.ID) })
	if ep.Signing != EndpointSigningEd25519 || ep.PublicKey == nil || ep.Secret != "" {
		t.Fatalf("created %+v: want signing ed25519, a public key and no secret", ep)
	}
	_, err = c.GetWebhookEndpointSecret(ctx, ep.ID)
	wantAPIError(t, err, 404, "resource_missing")

	oldHooks, err := NewWebhooks(*ep.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	account := func() func(*WebhookEvent) bool {
		ext := unique("go-ed")
		acct, err := c.CreateAccount(ctx, &AccountCreate{Name: "Go ed25519 " + ext, ExternalID: Value(ext)})
		if err != nil {
			t.Fatal(err)
		}
		return func(ev *WebhookEvent) bool { return ev.Account != nil && ev.Account.ID == acct.ID }
	}
	rc.await(t, oldHooks, account())

	rotated, err := c.RotateWebhookEndpointSecret(ctx, ep.ID)
	if err != nil || !strings.HasPrefix(rotated.PublicKey, "whpk_") || rotated.PublicKey == *ep.PublicKey || rotated.Secret != "" {
		t.Fatalf("rotated %+v %v", rotated, err)
	}
	newHooks, err := NewWebhooks(rotated.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	_, d := rc.await(t, newHooks, account())
	if _, err := oldHooks.Verify(d.header, d.body); err != nil {
		t.Fatalf("during the overlap the old public key does not verify: %v (signatures %s)", err, d.header.Get("webhook-signature"))
	}
}
