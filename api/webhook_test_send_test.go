package api_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/revops/revops/internal/domain/webhook/webhooktest"
)

// One manual test at a time per endpoint (CONTRACT §17): while the receiver holds the
// first test, a second one — by the plural route or the singular one, which names the
// same endpoint — is a 409 test_in_progress, and another endpoint can be tested; once
// the first has answered, a new test goes out.
func TestManualTestOneAtATime(t *testing.T) {
	rc := webhooktest.NewReceiver(t)
	other := webhooktest.NewReceiver(t)
	h := newHarness(t, trusting(t, rc)) // httptest receivers share one certificate
	sk := h.key["secret sandbox"]
	ep := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": rc.URL + "/hooks"})
	id := ep["id"].(string)
	ep2 := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": other.URL + "/hooks"})

	entered, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // a failed test never leaves the receiver's handler (and its Close) waiting
	rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) {
		select {
		case entered <- struct{}{}: // the first test: held until released
			<-release
		default: // a second one reached the receiver: answer it at once
		}
		_, _ = w.Write([]byte(webhooktest.AckSentence))
	})
	first := make(chan response, 1)
	go func() {
		r, err := h.send("POST", "/v1/webhook_endpoints/"+id+"/test", sk, []byte(`{"type":"deal-signed"}`))
		if err != nil {
			t.Error(err)
		}
		first <- r
	}()
	<-entered
	expectError(t, h.do("POST", "/v1/webhook_endpoints/"+id+"/test", sk, map[string]any{"type": "deal-signed"}), http.StatusConflict, "test_in_progress")
	expectError(t, h.do("POST", "/v1/webhook_endpoint/test", sk, map[string]any{"type": "deal-signed"}), http.StatusConflict, "test_in_progress")
	if r := h.do("POST", "/v1/webhook_endpoints/"+ep2["id"].(string)+"/test", sk, map[string]any{"type": "deal-signed"}); r.Status != http.StatusOK || r.json(t)["ok"] != true {
		t.Fatalf("another endpoint's test while the first is held: %d %s", r.Status, r.Body)
	}
	free()
	if r := <-first; r.Status != http.StatusOK || r.json(t)["ok"] != true {
		t.Fatalf("held test answered %d %s", r.Status, r.Body)
	}
	rc.SetRespond(nil)
	for _, path := range []string{"/v1/webhook_endpoints/" + id + "/test", "/v1/webhook_endpoint/test"} {
		if r := h.do("POST", path, sk, map[string]any{"type": "deal-signed"}); r.Status != http.StatusOK || r.json(t)["ok"] != true {
			t.Fatalf("%s after the first answered: %d %s", path, r.Status, r.Body)
		}
	}
	if n := len(rc.Received()); n != 3 {
		t.Fatalf("receiver got %d tests, want 3 (the refused ones never went out)", n)
	}
}
