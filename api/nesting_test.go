package api_test

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// deepBody is {"name": [[…"<leaf>"…]]} with depth arrays around leaf.
func deepBody(depth int, leaf string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"name":`)
	b.WriteString(strings.Repeat("[", depth))
	b.WriteString(leaf)
	b.WriteString(strings.Repeat("]", depth))
	b.WriteString(`}`)
	return b.Bytes()
}

// TestDeepNestingIsLinear: a deeply nested body is refused as invalid_json, and the work
// it costs is bounded by its size. The bound is structural (bytes allocated by the whole
// process while the request is served, at most a small multiple of the body), not a
// clock: a walk that rebuilds the path of every token allocates depth² bytes, which
// for depth 10,000 is hundreds of megabytes.
func TestDeepNestingIsLinear(t *testing.T) {
	h := newHarness(t)
	sk := h.key[skSandbox]
	before := h.fingerprint()
	leaves := []struct{ name, leaf string }{
		{"invalid UTF-8", "\"\xff\""},
		{"lone surrogate", `"\ud800"`},
		{"NUL escape", `"\u0000"`},
		{"plain string", `"x"`},
		{"number", `1`},
		{"object", `{"a":"\u0000"}`},
	}
	routes := []struct {
		method, path string
		limit        int // the deepest nesting the route accepts
	}{
		{"POST", "/v1/accounts", 64},
		{"POST", "/v1/deals", 64},
		{"POST", "/v1/events/replay", 64},
		{"PUT", "/v1/webhook_endpoint", 64},
		// Usage metadata is free-form: its scanner keeps encoding/json's limit, linearly.
		{"POST", "/v1/usage/events", 10_000},
	}
	var n int
	// Depth rises so that a quadratic walk fails early on the smaller bodies instead of
	// running for hours on the largest (about 400 KiB here, within the 1 MiB limit).
	for _, depth := range []int{65, 1_000, 10_000, 100_000} {
		for _, l := range leaves {
			for _, r := range routes {
				if depth <= r.limit {
					continue
				}
				body := deepBody(depth, l.leaf)
				for _, idem := range []bool{false, true} {
					var hdr []string
					if idem {
						hdr = []string{"Idempotency-Key", fmt.Sprintf("deep-%d-%s-%s", depth, l.name, r.path)}
					}
					var m0, m1 runtime.MemStats
					runtime.ReadMemStats(&m0)
					res := h.do(r.method, r.path, sk, body, hdr...)
					runtime.ReadMemStats(&m1)
					n++
					name := fmt.Sprintf("%s %s depth %d %s idempotent=%v", r.method, r.path, depth, l.name, idem)
					// Reading the body, the client's copy and the server's buffers: a
					// few times its size, plus a fixed allowance for the rest.
					if got, limit := m1.TotalAlloc-m0.TotalAlloc, uint64(16*len(body)+8<<20); got > limit {
						t.Fatalf("%s: %d bytes allocated for a %d-byte body (limit %d)", name, got, len(body), limit)
					}
					if res.Status != http.StatusBadRequest || res.errorCode(t) != "invalid_json" {
						t.Fatalf("%s: %d %s, want 400 invalid_json", name, res.Status, res.Body)
					}
				}
			}
		}
	}
	if after := h.fingerprint(); after != before {
		t.Errorf("data changed:\n before %s\n after  %s", before, after)
	}
	t.Logf("%d deeply nested requests", n)
}
