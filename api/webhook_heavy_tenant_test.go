package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/platform/config"
)

// CONTRACT §21 for the endpoint work of §23 and §25: one environment does the heaviest
// of it, in parallel and without pause — changes fanned out through 16 endpoints with
// 4 KiB filters, filter tests of 4 KiB filters on near-megabyte payloads, 30-day hourly
// stats — while another environment of the same Revops creates its endpoint, makes its
// changes and reads its stats. The other environment is never refused (no 429, no 5xx)
// and finishes while the heavy one is still at it; the heavy one is held to its own
// environment's rate (429) and otherwise answered, never refused nor failed.
func TestHeavyEndpointWorkOfOneEnvironmentLeavesAnotherWorking(t *testing.T) {
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			h := newHarnessOn(t, db, func(c *config.Config, _ *api.Deps) { c.EnvRateLimit, c.WebhookAllowPrivate = 5, true })
			heavy, other := h.key["secret live"], h.key[skSandbox]

			filter := bigFilter()
			var endpoints []string
			for i := range 16 {
				body := map[string]any{"url": fmt.Sprintf("https://127.0.0.1:9/heavy-%d", i), "event_types": []string{"*"}, "filter": filter}
				r := h.do("POST", "/v1/webhook_endpoints", heavy, body)
				for r.Status == http.StatusTooManyRequests { // the environment's own rate, as a client would
					time.Sleep(200 * time.Millisecond)
					r = h.do("POST", "/v1/webhook_endpoints", heavy, body)
				}
				if r.Status != http.StatusCreated {
					t.Fatalf("heavy endpoint %d: %d %s", i, r.Status, r.Body)
				}
				endpoints = append(endpoints, r.json(t)["id"].(string))
			}
			payload := map[string]any{"deal": map[string]any{"net_price": strings.Repeat("9", 900_000)}}
			stats := "/stats?window=hour&from=2026-10-01T00:00:00Z&to=2026-10-31T00:00:00Z"

			var (
				stop          = make(chan struct{})
				wg            sync.WaitGroup
				sent, limited atomic.Int64
				failed        atomic.Value // the first answer of the heavy environment other than 2xx or 429
			)
			heavyCalls := []func(n int) response{
				func(n int) response {
					return h.do("POST", "/v1/accounts", heavy, map[string]any{"name": fmt.Sprintf("Heavy %d", n)})
				},
				func(int) response {
					return h.do("POST", "/v1/webhook_endpoints/filter_test", heavy, map[string]any{"filter": filter, "payload": payload})
				},
				func(n int) response {
					return h.do("GET", "/v1/webhook_endpoints/"+endpoints[n%len(endpoints)]+stats, heavy, nil)
				},
			}
			for w := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := 0; ; n++ {
						select {
						case <-stop:
							return
						default:
						}
						r := heavyCalls[w%len(heavyCalls)](n)
						sent.Add(1)
						switch {
						case r.Status == http.StatusTooManyRequests:
							limited.Add(1)
						case r.Status >= 300:
							failed.CompareAndSwap(nil, fmt.Sprintf("%d %s", r.Status, r.Body))
						}
					}
				}()
			}

			// The other environment's whole story, while the heavy one runs.
			before := sent.Load()
			must := func(want int, method, path string, body any) map[string]any {
				t.Helper()
				r := h.do(method, path, other, body)
				if r.Status != want {
					t.Fatalf("the other environment's %s %s: %d %s, want %d", method, path, r.Status, r.Body, want)
				}
				return r.json(t)
			}
			ep := must(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": "https://127.0.0.1:9/other",
				"event_types": []string{"deal-created"}, "filter": map[string]any{"deal.net_price": map[string]any{"$gte": "1000"}}})
			acct := must(http.StatusCreated, "POST", "/v1/accounts", map[string]any{"name": "Other Co"})["id"].(string)
			must(http.StatusCreated, "POST", "/v1/deals", pricedDealBody(acct))
			if m := must(http.StatusOK, "POST", "/v1/webhook_endpoints/filter_test", map[string]any{"filter": map[string]any{"deal.net_price": map[string]any{"$gte": "1000"}},
				"payload": map[string]any{"deal": map[string]any{"net_price": "19999.00"}}}); m["match"] != true {
				t.Errorf("the other environment's filter test: %v, want a match", m)
			}
			must(http.StatusOK, "GET", "/v1/webhook_endpoints/"+ep["id"].(string)+stats, nil)
			// Order, not time: the heavy environment was sending all along, and still is
			// after the other one is done (a request of it ends after this point; the
			// minute is a guard against a hang, not a bound the test asserts).
			done := sent.Load()
			if done == before {
				t.Error("the heavy environment sent nothing while the other one worked")
			}
			for guard := time.Now().Add(time.Minute); sent.Load() == done && time.Now().Before(guard); {
				time.Sleep(10 * time.Millisecond)
			}
			if sent.Load() == done {
				t.Error("the heavy environment stopped before the other one was done")
			}
			close(stop)
			wg.Wait()

			if f := failed.Load(); f != nil {
				t.Errorf("the heavy environment got %v", f)
			}
			if limited.Load() == 0 {
				t.Errorf("the heavy environment sent %d requests and none was held to its rate (429)", sent.Load())
			}
		})
	}
}

// bigFilter is a filter of almost 4 KiB that every operator of it must read: 24
// conditions of $in lists on paths the payloads do not all hold.
func bigFilter() map[string]any {
	var or []any
	for i := range 24 {
		items := make([]any, 10)
		for j := range items {
			items[j] = fmt.Sprintf("v%02d-%02d", i, j)
		}
		or = append(or, map[string]any{fmt.Sprintf("deal.f%02d", i): map[string]any{"$in": items}})
	}
	return map[string]any{"$or": append(or, map[string]any{"deal.net_price": map[string]any{"$gte": "1000"}})}
}
