package activities_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/signing"
)

// verifyV1a counts the "v1a," entries of webhook-signature that verify under the public
// key public ("whpk_…") with crypto/ed25519 alone, as a receiver holding only that key
// does (the specification's asymmetric scheme, written again here rather than with
// internal/platform/signing). at is the sender's clock: the timestamp must be its time.
func verifyV1a(t *testing.T, public string, r webhooktest.Received, at time.Time) int {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(public, "whpk_"))
	if err != nil || len(raw) != ed25519.PublicKeySize {
		t.Fatalf("public key %q: %d bytes, %v", public, len(raw), err)
	}
	id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	if sec, err := strconv.ParseInt(ts, 10, 64); err != nil || time.Unix(sec, 0).Sub(at).Abs() > time.Minute {
		t.Fatalf("webhook-timestamp %q is not the sender's time %v", ts, at)
	}
	msg := []byte(id + "." + ts + "." + string(r.Body))
	n := 0
	for _, entry := range strings.Fields(r.Header.Get("webhook-signature")) {
		sig, ok := strings.CutPrefix(entry, "v1a,")
		if !ok {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && ed25519.Verify(ed25519.PublicKey(raw), msg, b) {
			n++
		}
	}
	return n
}

// An ed25519 endpoint's deliveries (CONTRACT §25) carry a v1a signature its public key
// verifies; after a rotation both keys sign for 24 h, then only the new one. The clock is
// the activities' (Delivery.Now), moved past the overlap.
func TestEd25519SignaturesThroughARotation(t *testing.T) {
	f := newFixture(t)
	private, oldPublic, err := signing.NewEd25519Key()
	if err != nil {
		t.Fatal(err)
	}
	f.secret = private
	f.endpoint(t, f.rc.URL, http.MethodPost, true)
	ctx := context.Background()
	ep, err := f.db.Store.WebhookEndpoint(ctx, f.db.Env)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	f.acts.Now = func() time.Time { return now }
	send := func(id string) webhooktest.Received {
		t.Helper()
		before := len(f.rc.Received())
		if err := f.deliver(t, f.db.Event(t, "deal-signed", map[string]any{"id": id}, time.Time{}), 6); err != nil {
			t.Fatal(err)
		}
		got := f.rc.Received()
		if len(got) != before+1 {
			t.Fatalf("the receiver got %d deliveries, want %d", len(got), before+1)
		}
		return got[before]
	}
	entries := func(r webhooktest.Received) int { return len(strings.Fields(r.Header.Get("webhook-signature"))) }

	r := send("d1")
	if verifyV1a(t, oldPublic, r, now) != 1 || entries(r) != 1 {
		t.Fatalf("before rotation: signatures %q, want one v1a under the endpoint's key", r.Header.Get("webhook-signature"))
	}

	rotated, err := webhook.RotateKey(ctx, f.db.Store, f.db.Env, ep.ID, now, webhook.RotationOverlap, idempotency.Reply[webhook.SecretObject]{})
	if err != nil {
		t.Fatal(err)
	}
	newPublic := webhook.ToSecretObject(rotated).PublicKey
	if !strings.HasPrefix(newPublic, "whpk_") || newPublic == oldPublic {
		t.Fatalf("rotation answered public key %q (old %q)", newPublic, oldPublic)
	}
	r = send("d2")
	if verifyV1a(t, newPublic, r, now) != 1 || verifyV1a(t, oldPublic, r, now) != 1 || entries(r) != 2 {
		t.Fatalf("during the overlap: signatures %q, want one v1a under each key", r.Header.Get("webhook-signature"))
	}

	now = now.Add(webhook.RotationOverlap + time.Second)
	r = send("d3")
	if verifyV1a(t, newPublic, r, now) != 1 || verifyV1a(t, oldPublic, r, now) != 0 || entries(r) != 1 {
		t.Fatalf("after the overlap: signatures %q, want the new key's only", r.Header.Get("webhook-signature"))
	}
}

// A PATCH from hmac-sha256 to ed25519 signs with both for the overlap: the receiver's old
// secret verifies v1, the new public key v1a.
func TestSchemeSwitchSignsWithBoth(t *testing.T) {
	f := newFixture(t)
	f.endpoint(t, f.rc.URL, http.MethodPost, true)
	ctx := context.Background()
	ep, err := f.db.Store.WebhookEndpoint(ctx, f.db.Env)
	if err != nil {
		t.Fatal(err)
	}
	private, public, err := signing.NewEd25519Key()
	if err != nil {
		t.Fatal(err)
	}
	ed := signing.SchemeEd25519
	if _, err := webhook.UpdateEndpoint(ctx, f.db.Store, f.db.Env, ep.ID, webhook.EndpointPatch{Signing: &ed, NewKey: private},
		time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	if err := f.deliver(t, f.db.Event(t, "deal-signed", map[string]any{"id": "d"}, time.Time{}), 6); err != nil {
		t.Fatal(err)
	}
	r := f.rc.Received()[0]
	if verifyV1a(t, public, r, time.Now()) != 1 || verifyStandardWebhooks(t, f.secret, r.Header, r.Body) != 1 {
		t.Fatalf("after the switch: signatures %q, want a v1a under the new key and a v1 under the old secret", r.Header.Get("webhook-signature"))
	}
}
