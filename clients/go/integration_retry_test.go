package revops

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingTransport counts the requests and 429 answers that pass through it.
type countingTransport struct {
	requests, tooMany atomic.Int64
	mu                sync.Mutex
	calls             map[string][]attemptRecord // by the call's id, from the context
}

type attemptRecord struct {
	sent, answered time.Time
	status         int
	retryAfter     time.Duration
}

type callIDKey struct{}

func (ct *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ct.requests.Add(1)
	sent := time.Now()
	res, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	rec := attemptRecord{sent: sent, answered: time.Now(), status: res.StatusCode}
	if res.StatusCode == http.StatusTooManyRequests {
		ct.tooMany.Add(1)
		rec.retryAfter, _ = retryAfter(res.Header, rec.answered)
	}
	if id, ok := r.Context().Value(callIDKey{}).(string); ok {
		ct.mu.Lock()
		ct.calls[id] = append(ct.calls[id], rec)
		ct.mu.Unlock()
	}
	return res, nil
}

// TestIntegrationRateLimitRetriedAfterRetryAfter bursts GET /v1/whoami until the server
// answers 429, and checks that every call still succeeded, each retry waiting at least
// the Retry-After it was given.
func TestIntegrationRateLimitRetriedAfterRetryAfter(t *testing.T) {
	ct := &countingTransport{calls: map[string][]attemptRecord{}}
	c := liveClient(t, WithHTTPClient(&http.Client{Transport: ct, Timeout: time.Minute}), WithMaxRetries(20), WithBackoff(50*time.Millisecond, 500*time.Millisecond))
	ctx := testCtx(t)
	for burst := 1; ct.tooMany.Load() == 0; burst++ {
		if burst > 5 {
			t.Fatal("no 429 after 5 bursts of 150 calls: run the server with a low rate limit (REVOPS_RATE_LIMIT=20)")
		}
		var wg sync.WaitGroup
		errs := make(chan error, 150)
		for i := range 150 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				callCtx := context.WithValue(ctx, callIDKey{}, fmt.Sprintf("%d-%d", burst, i))
				if _, err := c.WhoAmI(callCtx); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("a call failed despite retries: %v", err)
		}
	}
	ct.mu.Lock()
	defer ct.mu.Unlock()
	retried := 0
	for id, attempts := range ct.calls {
		for i, a := range attempts[:len(attempts)-1] {
			if a.status != http.StatusTooManyRequests {
				t.Fatalf("call %s: attempt %d answered %d and was retried", id, i+1, a.status)
			}
			if a.retryAfter <= 0 {
				t.Fatalf("call %s: a 429 without Retry-After", id)
			}
			if waited := attempts[i+1].sent.Sub(a.answered); waited < a.retryAfter {
				t.Fatalf("call %s: retried %v after a 429 with Retry-After %v", id, waited, a.retryAfter)
			}
			retried++
		}
		if last := attempts[len(attempts)-1]; last.status != http.StatusOK {
			t.Fatalf("call %s ended %d", id, last.status)
		}
	}
	t.Logf("%d answers were 429, %d retries, all calls succeeded", ct.tooMany.Load(), retried)
}

// TestIntegration5xxRetriedWithTheSameKey puts a proxy before Revops that forwards the
// first POST and then answers 502 as if the answer were lost: the client retries with the
// same Idempotency-Key and body, Revops replays its stored answer, and one account exists.
func TestIntegration5xxRetriedWithTheSameKey(t *testing.T) {
	liveClient(t) // skips without a server
	target, _ := url.Parse(strings.TrimRight(os.Getenv("REVOPS_BASE_URL"), "/"))
	proxy := httputil.NewSingleHostReverseProxy(target)
	var (
		mu       sync.Mutex
		keys     []string
		replayed []string
	)
	proxy.ModifyResponse = func(res *http.Response) error {
		// Only an answer that did the work is lost. A refusal (a 429: the key's budget is
		// shared with the suite's other tests) reaches the client, which sends again.
		if res.Request.Method != http.MethodPost || res.StatusCode/100 != 2 {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, res.Request.Header.Get("Idempotency-Key"))
		replayed = append(replayed, res.Header.Get("Idempotent-Replayed"))
		if len(keys) == 1 { // Revops did the work; the client never hears of it
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			res.StatusCode, res.Status = http.StatusBadGateway, "502 Bad Gateway"
			res.Header = http.Header{"Content-Type": {"text/plain"}}
			res.Body = io.NopCloser(strings.NewReader("upstream went away"))
			res.ContentLength = -1
		}
		return nil
	}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	c := liveClient(t, WithBaseURL(srv.URL))
	ctx := testCtx(t)
	ext := unique("go-5xx")
	a, err := c.CreateAccount(ctx, &AccountCreate{Name: "Go 5xx " + ext, ExternalID: Value(ext)})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
		t.Fatalf("POST attempts carried keys %q", keys)
	}
	if replayed[1] != "true" {
		t.Errorf("the retry was not answered from the stored response (Idempotent-Replayed %q)", replayed[1])
	}
	list, err := c.ListAccounts(ctx, &ListAccountsParams{ExternalID: ext})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 1 || list.Data[0].ID != a.ID {
		t.Fatalf("%d accounts with external id %s, want exactly 1", len(list.Data), ext)
	}
}
