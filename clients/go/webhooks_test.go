package revops

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	newSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	oldSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
)

const dealSignedBody = `{"event":{"id":"e1","time":"1795000000","type":"deal-signed"},"deal":` // + deal + "}"

// sign is Revops's signing (internal/platform/signing), written again from the specification.
func sign(secret, id string, ts int64, body string) string {
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "." + body))
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func signedHeader(ts int64, sigs ...string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", "e1")
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", strings.Join(sigs, " "))
	return h
}

func TestVerifyAcceptsAndDecodes(t *testing.T) {
	body := dealSignedBody + dealJSON("d1") + "}"
	now := time.Now()
	w, err := NewWebhooks(newSecret)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := w.Verify(signedHeader(now.Unix(), sign(newSecret, "e1", now.Unix(), body)), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Event.Type != EventTypeDealSigned || ev.Deal == nil || ev.Deal.ID != "d1" || ev.Account != nil {
		t.Fatalf("decoded %+v", ev)
	}
	if at, err := ev.Event.Timestamp(); err != nil || at.Unix() != 1795000000 {
		t.Fatalf("event time %v %v", at, err)
	}
}

func TestVerifyDuringARotation(t *testing.T) {
	body := dealSignedBody + dealJSON("d1") + "}"
	ts := time.Now().Unix()
	// Revops signs with the new secret and, for 24 h, the old one too.
	h := signedHeader(ts, sign(newSecret, "e1", ts, body), sign(oldSecret, "e1", ts, body))
	for _, secret := range []string{newSecret, oldSecret} {
		w, _ := NewWebhooks(secret)
		if _, err := w.Verify(h, []byte(body)); err != nil {
			t.Errorf("secret %.10s…: %v", secret, err)
		}
	}
	other := "whsec_" + base64.StdEncoding.EncodeToString([]byte("another key, never used to sign"))
	w, _ := NewWebhooks(other)
	if _, err := w.Verify(h, []byte(body)); !errors.Is(err, ErrWebhookSignature) {
		t.Fatalf("a third secret: %v", err)
	}
}

func TestVerifyRejects(t *testing.T) {
	body := dealSignedBody + dealJSON("d1") + "}"
	now := time.Now()
	ts := now.Unix()
	good := sign(newSecret, "e1", ts, body)
	w, _ := NewWebhooks(newSecret)
	cases := []struct {
		name   string
		header http.Header
		body   string
		want   error
	}{
		{"tampered body", signedHeader(ts, good), strings.Replace(body, "d1", "d2", 1), ErrWebhookSignature},
		{"bad signature", signedHeader(ts, "v1,"+base64.StdEncoding.EncodeToString([]byte("nope"))), body, ErrWebhookSignature},
		{"other version", signedHeader(ts, "v2,"+strings.TrimPrefix(good, "v1,")), body, ErrWebhookSignature},
		{"old timestamp", signedHeader(ts-6*60, sign(newSecret, "e1", ts-6*60, body)), body, ErrWebhookTimestamp},
		{"future timestamp", signedHeader(ts+6*60, sign(newSecret, "e1", ts+6*60, body)), body, ErrWebhookTimestamp},
		{"missing headers", http.Header{}, body, ErrWebhookHeaders},
	}
	for _, c := range cases {
		if _, err := w.Verify(c.header, []byte(c.body)); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// The tolerance is configurable.
	lenient, _ := NewWebhooks(newSecret, WithTolerance(10*time.Minute))
	if _, err := lenient.Verify(signedHeader(ts-6*60, sign(newSecret, "e1", ts-6*60, body)), []byte(body)); err != nil {
		t.Errorf("10-minute tolerance: %v", err)
	}
}

func TestNewWebhooksRefusesABadSecretWithoutShowingIt(t *testing.T) {
	_, err := NewWebhooks("whsec_not base64!")
	if err == nil || strings.Contains(err.Error(), "not base64!") {
		t.Fatalf("got %v", err)
	}
}

func TestVerifyRequestReadsPOSTBodiesAndGETPayloads(t *testing.T) {
	body := `{"event":{"id":"e1","time":"1795000000","type":"account-created"},"account":` + accountJSON + `}`
	ts := time.Now().Unix()
	w, _ := NewWebhooks(newSecret)

	post := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
	post.Header = signedHeader(ts, sign(newSecret, "e1", ts, body))
	ev, err := w.VerifyRequest(post)
	if err != nil || ev.Account == nil || ev.Account.Name != "Acme" {
		t.Fatalf("POST: %+v %v", ev, err)
	}

	get := httptest.NewRequest(http.MethodGet, "/hook?payload="+url.QueryEscape(body), nil)
	get.Header = signedHeader(ts, sign(newSecret, "e1", ts, body))
	if ev, err := w.VerifyRequest(get); err != nil || ev.Event.Type != EventTypeAccountCreated {
		t.Fatalf("GET: %+v %v", ev, err)
	}
}

// A proxy may split the rotation's signatures over two header lines: both count.
func TestVerifyReadsEverySignatureLine(t *testing.T) {
	body := dealSignedBody + dealJSON("d1") + "}"
	ts := time.Now().Unix()
	h := signedHeader(ts, sign(oldSecret, "e1", ts, body))
	h.Add("webhook-signature", sign(newSecret, "e1", ts, body))
	w, _ := NewWebhooks(newSecret)
	if _, err := w.Verify(h, []byte(body)); err != nil {
		t.Fatalf("the second line's signature: %v", err)
	}
}
