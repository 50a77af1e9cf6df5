package e2e

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/catalog/catalogtest"
)

// wantHook is one delivery a change must cause: its event type, the object's body key,
// id and status at that change.
type wantHook struct{ typ, key, id, status string }

func (w wantHook) String() string { return w.typ + " " + w.key + " " + w.id + " " + w.status }

var unixDigits = regexp.MustCompile(`^[0-9]+$`)

// TestEventTypesThroughAPI drives the real API through changes that emit all seven
// event types and checks every webhook the receiver gets: shape, headers, signature, and
// the body against the catalog's JSON Schema of its type.
func TestEventTypesThroughAPI(t *testing.T) {
	s := newStack(t)
	w := s.worker()
	defer w.Stop()
	rapi := s.api(s.starter(s.ts.GetDefaultClient()))
	ctx := context.Background()

	var sec struct{ Secret string }
	if err := rapi.Do(ctx, "GET", "/v1/webhook_endpoint/secret", nil, &sec); err != nil || sec.Secret != s.secret {
		t.Fatalf("endpoint secret %q (err %v), want the stack's", sec.Secret, err)
	}
	call := func(method, path string, body any) map[string]any {
		t.Helper()
		var out map[string]any
		if err := rapi.Do(ctx, method, path, body, &out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return out
	}

	acc := call("POST", "/v1/accounts", map[string]any{"name": "Initech", "billing_email": "ap@initech.example"})["id"].(string)
	call("PATCH", "/v1/accounts/"+acc, map[string]any{"domain": "initech.example"})
	deal := call("POST", "/v1/deals", map[string]any{
		"customer":  map[string]any{"id": acc},
		"net_price": "19999.00", "net_price_currency": "USD", "net_price_precision": "2",
		"original_net_price": "25000", "original_net_price_currency": "USD", "original_net_price_precision": "0",
	})["id"].(string)
	for _, action := range []string{"submit", "approve", "sign", "activate"} {
		call("POST", "/v1/deals/"+deal+"/"+action, nil)
	}
	gone := call("POST", "/v1/accounts", map[string]any{"name": "Hooli"})["id"].(string)
	call("DELETE", "/v1/accounts/"+gone, nil)

	want := []wantHook{
		{"account-created", "account", acc, "draft"},
		{"account-updated", "account", acc, "draft"},
		{"deal-created", "deal", deal, "draft"},
		{"deal-updated", "deal", deal, "pending_approval"},
		{"deal-updated", "deal", deal, "approved"},
		{"deal-updated", "deal", deal, "signed"},
		{"deal-signed", "deal", deal, "signed"},
		{"deal-updated", "deal", deal, "active"},
		{"deal-active", "deal", deal, "active"},
		{"account-updated", "account", acc, "active"},
		{"account-created", "account", gone, "draft"},
		{"account-deleted", "account", gone, "deprovisioned"},
	}
	got := waitHooks(t, s.rc, len(want), 90*time.Second)
	time.Sleep(2 * time.Second) // nothing more may come: no duplicates, no stray events
	if extra := s.rc.Received(); len(extra) != len(want) {
		t.Errorf("receiver got %d requests, want %d", len(extra), len(want))
		got = extra
	}

	var seen []string
	types := map[string]int{}
	for _, r := range got {
		h := checkHook(t, r, s.secret)
		seen = append(seen, h.String())
		types[h.typ]++
	}
	var expected []string
	for _, h := range want {
		expected = append(expected, h.String())
	}
	sort.Strings(seen)
	sort.Strings(expected)
	if strings.Join(seen, "\n") != strings.Join(expected, "\n") {
		t.Errorf("webhooks received:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(expected, "\n"))
	}
	for _, typ := range []string{"account-created", "account-updated", "account-deleted", "deal-created", "deal-updated", "deal-signed", "deal-active"} {
		if types[typ] == 0 {
			t.Errorf("no %s webhook", typ)
		}
	}
	if types["deal-created"] != 1 || types["deal-signed"] != 1 {
		t.Errorf("deal-created sent %d times, deal-signed %d times; want once each", types["deal-created"], types["deal-signed"])
	}
}

// waitHooks waits until the receiver has n requests.
func waitHooks(t *testing.T, rc *webhooktest.Receiver, n int, within time.Duration) []webhooktest.Received {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := rc.Received()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver got %d requests after %v, want %d", len(got), within, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkHook verifies one delivery against CONTRACT §8 and returns what it carried.
func checkHook(t *testing.T, r webhooktest.Received, secret string) wantHook {
	t.Helper()
	if r.Method != "POST" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s with Content-Type %q, want POST application/json", r.Method, r.Header.Get("Content-Type"))
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &top); err != nil || len(top) != 2 || top["event"] == nil {
		t.Fatalf("body is not {event, object}: %s (err %v)", r.Body, err)
	}
	var ev map[string]any
	if err := json.Unmarshal(top["event"], &ev); err != nil || len(ev) < 3 || len(ev) > 4 || (len(ev) == 4 && ev["sequence"] == nil) {
		t.Fatalf("event member is not {id, time, type[, sequence]}: %s", top["event"])
	}
	id, _ := ev["id"].(string)
	tm, _ := ev["time"].(string)
	typ, _ := ev["type"].(string)
	if _, err := uuid.Parse(id); err != nil || !unixDigits.MatchString(tm) {
		t.Errorf("event id %v or time %v malformed: %s", ev["id"], ev["time"], r.Body)
	}
	key := strings.SplitN(typ, "-", 2)[0] // deal-… → deal, account-… → account
	var obj map[string]any
	if err := json.Unmarshal(top[key], &obj); err != nil || obj == nil {
		t.Fatalf("%s body has no %q object: %s", typ, key, r.Body)
	}
	head := `{"event":{"id":"` + id + `","time":"` + tm + `","type":"` + typ + `"`
	if seq, ok := ev["sequence"].(float64); ok { // CONTRACT §26: last, a whole number ≥ 1
		if seq < 1 || seq != math.Trunc(seq) {
			t.Errorf("event sequence %v: %s", seq, r.Body)
		}
		head += `,"sequence":` + strconv.FormatFloat(seq, 'f', -1, 64)
	}
	if prefix := head + `},"` + key + `":{`; !bytes.HasPrefix(r.Body, []byte(prefix)) {
		t.Errorf("body does not start with %s: %s", prefix, r.Body)
	}
	if obj["object"] != key {
		t.Errorf("%s: object %v under %q", typ, obj["object"], key)
	}
	if r.Header.Get("webhook-id") != id {
		t.Errorf("webhook-id %q, event id %q", r.Header.Get("webhook-id"), id)
	}
	ts := r.Header.Get("webhook-timestamp")
	sent, err := strconv.ParseInt(ts, 10, 64)
	if d := r.At.Sub(time.Unix(sent, 0)); err != nil || d < -5*time.Second || d > 5*time.Second {
		t.Errorf("webhook-timestamp %q is %v from its arrival", ts, d)
	}
	if err := verifyStandardWebhook(secret, id, ts, r.Body, r.Header.Get("webhook-signature")); err != nil {
		t.Errorf("%s %s: %v", typ, id, err)
	}
	// The body as received, against GET /v1/event_types's schema of its type.
	if err := catalogtest.ValidateAs(typ, r.Body); err != nil {
		t.Errorf("%s %s: %v\n%s", typ, id, err, r.Body)
	}
	oid, _ := obj["id"].(string)
	status, _ := obj["status"].(string)
	return wantHook{typ, key, oid, status}
}

// verifyStandardWebhook checks a signature as the Standard Webhooks specification says,
// independently of internal/platform/signing: HMAC-SHA256 of "id.timestamp.body" under the
// base64 key after "whsec_", matching any of the space-separated "v1,<base64>" entries.
func verifyStandardWebhook(secret, id, ts string, body []byte, header string) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		return fmt.Errorf("secret %q is not whsec_<base64>", secret)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(header) {
		v, b64, ok := strings.Cut(sig, ",")
		if !ok || v != "v1" {
			continue
		}
		if got, err := base64.StdEncoding.DecodeString(b64); err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no v1 signature in %q matches", header)
}
