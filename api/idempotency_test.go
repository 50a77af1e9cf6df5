package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/fingerprint"
	"github.com/revops/revops/internal/store"
)

// concurrently sends n identical requests with one Idempotency-Key at once and checks
// CONTRACT §14: one request runs, every other one gets its answer replayed (they wait
// for it), byte for byte.
func concurrently(t *testing.T, h *harness, n int, method, path string, body []byte, want int) response {
	t.Helper()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		got   = make([]response, n)
		errs  = make([]error, n)
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i], errs[i] = h.send(method, path, h.key[skSandbox], body, "Idempotency-Key", "same-key-"+path)
		}()
	}
	close(start)
	wg.Wait()
	var first response
	replayed := 0
	for i, r := range got {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if r.Status != want {
			t.Fatalf("request %d: status %d, want %d: %s", i, r.Status, want, r.Body)
		}
		if r.Header.Get("Idempotent-Replayed") == "true" {
			replayed++
		} else {
			first = r
		}
	}
	if replayed != n-1 {
		t.Fatalf("%d of %d answers replayed, want %d", replayed, n, n-1)
	}
	for i, r := range got {
		if !bytes.Equal(r.Body, first.Body) {
			t.Fatalf("answer %d differs from the first:\n%s\n%s", i, r.Body, first.Body)
		}
	}
	return first
}

func TestIdempotencyConcurrentIdenticalRequests(t *testing.T) {
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			h := newHarnessOn(t, db)
			const n = 50

			acct := concurrently(t, h, n, "POST", "/v1/accounts", []byte(`{"name":"Once"}`), http.StatusCreated)
			list := h.mustObj(http.StatusOK, "GET", "/v1/accounts?limit=100", nil)
			if data := list["data"].([]any); len(data) != 1 {
				t.Fatalf("%d accounts created, want 1", len(data))
			}
			acctID := acct.json(t)["id"].(string)
			if got := objEventTypes(h.objEvents(acctID)); got != "account-created" {
				t.Fatalf("account events %q", got)
			}

			deal := h.mustObj(http.StatusCreated, "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": acctID}})
			dealID := deal["id"].(string)
			sub := concurrently(t, h, n, "POST", "/v1/deals/"+dealID+"/submit", nil, http.StatusOK)
			if s := sub.json(t)["status"]; s != "pending_approval" {
				t.Fatalf("submitted deal status %v", s)
			}
			if got := objEventTypes(h.objEvents(dealID)); got != "deal-created deal-updated" {
				t.Fatalf("deal events %q, want one deal-updated", got)
			}

			at := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
			usage := usageBody("tx-idem", "increment", metricJSON("acct_1", "calls", "2", "hour", fmt.Sprintf(`"timestamp":%q`, at)))
			u := concurrently(t, h, n, "POST", "/v1/usage/events", usage, http.StatusCreated)
			if d := u.json(t)["duplicate"]; d != false {
				t.Fatalf("usage answer duplicate=%v, want the first answer (false)", d)
			}
			if c := h.usageCounts("sandbox"); c[0] != 1 || c[1] != 1 {
				t.Fatalf("batches/events/rollups %v, want one counted", c)
			}
		})
	}
}

// rawDB opens the harness's database directly (PostgreSQL or SQLite), for what a test
// reads or writes behind the API's back; it is closed at cleanup.
func rawDB(t *testing.T, h *harness) *gorm.DB {
	t.Helper()
	dial := sqlite.Open(h.dbURL)
	if strings.HasPrefix(h.dbURL, "postgres") {
		dial = postgres.Open(h.dbURL)
	}
	db, err := gorm.Open(dial, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	t.Cleanup(func() { _ = sqlDB.Close() })
	return db
}

// ageClaim moves a key's claim back by d, as if its request had started d ago.
func ageClaim(t *testing.T, h *harness, key string, d time.Duration) {
	t.Helper()
	db := rawDB(t, h)
	var claimedAt time.Time
	if err := db.Raw("SELECT claimed_at FROM idempotency_keys WHERE idempotency_key = ?", key).Row().Scan(&claimedAt); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec("UPDATE idempotency_keys SET claimed_at = ? WHERE idempotency_key = ?", claimedAt.Add(-d).UTC(), key).Error; err != nil {
		t.Fatal(err)
	}
}

func TestIdempotencyRules(t *testing.T) {
	for _, db := range []string{"postgres", "sqlite"} {
		t.Run(db, func(t *testing.T) {
			h := newHarnessOn(t, db)
			sk := h.key[skSandbox]
			post := func(key, path, body string) response {
				t.Helper()
				return h.do("POST", path, sk, []byte(body), "Idempotency-Key", key)
			}
			replayOf := func(first, again response) {
				t.Helper()
				if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
					t.Fatalf("not a replay: %d %s (replayed %q), first %d %s", again.Status, again.Body,
						again.Header.Get("Idempotent-Replayed"), first.Status, first.Body)
				}
			}

			// Same body by value: key order, whitespace and 1 vs 1.0 vs 1e0 do not matter.
			first := post("k-value", "/v1/accounts", `{"name":"V","properties":{"n":1,"m":"x"}}`)
			if first.Status != http.StatusCreated || first.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("first: %d %s", first.Status, first.Body)
			}
			replayOf(first, post("k-value", "/v1/accounts", `{ "properties" : {"m":"x","n":1.0}, "name":"V" }`))
			replayOf(first, post("k-value", "/v1/accounts", `{"properties":{"n":1e0,"m":"x"},"name":"V"}`))

			// Another body, path or method → reused.
			expectError(t, post("k-value", "/v1/accounts", `{"name":"W","properties":{"n":1,"m":"x"}}`), http.StatusConflict, "idempotency_key_reused")
			id := first.json(t)["id"].(string)
			expectError(t, post("k-value", "/v1/accounts/"+id+"/activate", `{"name":"V","properties":{"n":1,"m":"x"}}`), http.StatusConflict, "idempotency_key_reused")
			expectError(t, h.do("PATCH", "/v1/accounts/"+id, sk, []byte(`{"name":"V"}`), "Idempotency-Key", "k-value"), http.StatusConflict, "idempotency_key_reused")

			// A 400 is not kept: the retry with a fixed body under the same key runs.
			expectError(t, post("k-fix", "/v1/accounts", `{"nme":"typo"}`), http.StatusBadRequest, "unknown_parameter")
			fixed := post("k-fix", "/v1/accounts", `{"name":"Fixed"}`)
			if fixed.Status != http.StatusCreated || fixed.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("retry after a 400: %d %s", fixed.Status, fixed.Body)
			}

			// DELETE and PATCH: the replay answers 200 where running again would be 409.
			del := h.do("DELETE", "/v1/accounts/"+id, sk, nil, "Idempotency-Key", "k-del")
			if del.Status != http.StatusOK {
				t.Fatalf("delete: %d %s", del.Status, del.Body)
			}
			replayOf(del, h.do("DELETE", "/v1/accounts/"+id, sk, nil, "Idempotency-Key", "k-del"))
			expectError(t, h.do("DELETE", "/v1/accounts/"+id, sk, nil), http.StatusConflict, "invalid_state_transition")
			fid := fixed.json(t)["id"].(string)
			patch := h.do("PATCH", "/v1/accounts/"+fid, sk, []byte(`{"name":"Renamed"}`), "Idempotency-Key", "k-patch")
			replayOf(patch, h.do("PATCH", "/v1/accounts/"+fid, sk, []byte(`{"name":"Renamed"}`), "Idempotency-Key", "k-patch"))
			if evs := objEventTypes(h.objEvents(fid)); evs != "account-created account-updated" {
				t.Fatalf("events %q", evs)
			}

			// Keys are scoped to the environment: the live key's use does not collide.
			live := h.do("POST", "/v1/accounts", h.key["secret live"], []byte(`{"name":"V","properties":{"n":1,"m":"x"}}`), "Idempotency-Key", "k-value")
			if live.Status != http.StatusCreated || live.Header.Get("Idempotent-Replayed") != "" || live.json(t)["id"] == id {
				t.Fatalf("live: %d %s", live.Status, live.Body)
			}

			// An answer no write transaction kept (here usage's duplicate:true, as the
			// transaction_id was taken by an earlier request) is kept right after it.
			at := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
			batch := string(usageBody("tx-seen", "increment", metricJSON("a", "calls", "1", "hour", fmt.Sprintf(`"timestamp":%q`, at))))
			if r := h.do("POST", "/v1/usage/events", sk, []byte(batch)); r.Status != http.StatusCreated {
				t.Fatalf("usage: %d %s", r.Status, r.Body)
			}
			dup := post("k-dup", "/v1/usage/events", batch)
			if dup.Status != http.StatusOK || dup.json(t)["duplicate"] != true {
				t.Fatalf("duplicate usage: %d %s", dup.Status, dup.Body)
			}
			replayOf(dup, post("k-dup", "/v1/usage/events", batch))

			// A claim still running → in use (after the wait); once it is older than
			// 60 s it lapses and the next request takes it over and runs.
			env := h.objEnv("sandbox")
			stuck, err := h.store.ClaimIdempotencyKey(context.Background(), env, store.IdempotentRequest{
				Key: "k-crashed", Method: "POST", Path: "/v1/accounts", Fingerprint: fingerprint.Of([]byte(`{"name":"After crash"}`))})
			if err != nil || stuck.Outcome != store.ClaimOwned {
				t.Fatalf("claim: %v %v", stuck.Outcome, err)
			}
			expectError(t, post("k-crashed", "/v1/accounts", `{"name":"After crash"}`), http.StatusConflict, "idempotency_key_in_use")
			ageClaim(t, h, "k-crashed", 61*time.Second)
			took := post("k-crashed", "/v1/accounts", `{"name":"After crash"}`)
			if took.Status != http.StatusCreated || took.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("takeover: %d %s", took.Status, took.Body)
			}
			replayOf(took, post("k-crashed", "/v1/accounts", `{"name":"After crash"}`))
		})
	}
}

func TestIdempotencyKeyHeaderIsValidated(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ name, key string }{
		{"empty", ""},
		{"256 characters", strings.Repeat("k", 256)},
		{"tab", "a\tb"},
		{"not ASCII", "clé"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", "/v1/accounts", h.key[skSandbox], []byte(`{"name":"Bad key"}`), "Idempotency-Key", tc.key)
			expectError(t, r, http.StatusBadRequest, "parameter_invalid")
			if p := r.json(t)["error"].(map[string]any)["param"]; p != "Idempotency-Key" {
				t.Fatalf("param %v", p)
			}
		})
	}
	if data := h.mustObj(http.StatusOK, "GET", "/v1/accounts", nil)["data"].([]any); len(data) != 0 {
		t.Fatalf("%d accounts created by refused requests", len(data))
	}
	ok := h.do("POST", "/v1/accounts", h.key[skSandbox], []byte(`{"name":"Good key"}`), "Idempotency-Key", strings.Repeat("k", 255))
	if ok.Status != http.StatusCreated {
		t.Fatalf("255 characters: %d %s", ok.Status, ok.Body)
	}
}

// A retried rotation with its key learns the secret the first call made, and rotates once:
// the previous secret is still the original one.
func TestIdempotentSecretRotation(t *testing.T) {
	h := newHarness(t, func(c *config.Config, _ *api.Deps) { c.WebhookAllowPrivate = true })
	sk := h.key[skSandbox]
	put := h.do("PUT", "/v1/webhook_endpoint", sk, map[string]any{"url": "https://127.0.0.1:9443/hooks"})
	if put.Status != http.StatusOK {
		t.Fatalf("PUT: %d %s", put.Status, put.Body)
	}
	original := put.json(t)["secret"]
	first := h.do("POST", "/v1/webhook_endpoint/rotate_secret", sk, nil, "Idempotency-Key", "rotate-1")
	again := h.do("POST", "/v1/webhook_endpoint/rotate_secret", sk, nil, "Idempotency-Key", "rotate-1")
	if first.Status != http.StatusOK || !bytes.Equal(first.Body, again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("rotations: %d %s / %d %s", first.Status, first.Body, again.Status, again.Body)
	}
	ep, err := h.store.WebhookEndpoint(context.Background(), h.objEnv("sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	if ep.Secret != first.json(t)["secret"] || ep.PreviousSecret != original {
		t.Fatalf("rotated more than once: previous secret is not the original one")
	}
}
