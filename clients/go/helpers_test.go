package revops

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// recorder is an httptest server that answers from a script, one entry per request, and
// keeps every request it saw.
type recorder struct {
	t       *testing.T
	mu      sync.Mutex
	answers []func(w http.ResponseWriter, r *http.Request)
	seen    []*http.Request
	bodies  []string
}

func newRecorder(t *testing.T, answers ...func(w http.ResponseWriter, r *http.Request)) (*recorder, *Client) {
	t.Helper()
	rec := &recorder{t: t, answers: answers}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c, err := NewClient(WithAPIKey("sk_sandbox_test"), WithBaseURL(srv.URL), WithBackoff(time.Millisecond, 4*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return rec, c
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := make([]byte, r.ContentLength)
	if r.ContentLength > 0 {
		_, _ = r.Body.Read(body)
	}
	rec.mu.Lock()
	n := len(rec.seen)
	rec.seen = append(rec.seen, r)
	rec.bodies = append(rec.bodies, string(body))
	rec.mu.Unlock()
	if n >= len(rec.answers) {
		rec.t.Errorf("request %d (%s %s) beyond the script", n+1, r.Method, r.URL)
		w.WriteHeader(http.StatusTeapot)
		return
	}
	rec.answers[n](w, r)
}

func (rec *recorder) requests() []*http.Request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]*http.Request(nil), rec.seen...)
}

// status answers with a status and a JSON body.
func status(code int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req_header")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

func apiError(code int, errCode string) func(http.ResponseWriter, *http.Request) {
	return status(code, `{"error":{"type":"invalid_request_error","code":"`+errCode+`","message":"m","request_id":"req_body"}}`)
}

const accountJSON = `{"id":"a1","object":"account","name":"Acme","external_id":null,"domain":null,"billing_email":null,"status":"draft","properties":{},"created_at":"2026-11-24T10:00:00Z","updated_at":"2026-11-24T10:00:00Z"}`
