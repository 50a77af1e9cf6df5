package api_test

import (
	"net/http"
	"testing"
)

// CONTRACT §26: ordering is "none" unless a create or a PATCH asks for "object"; the
// endpoint object shows it, a PATCH of other members keeps it, and a PATCH turns it off.
func TestWebhookEndpointOrdering(t *testing.T) {
	h, rc := newReceiving(t)
	sk := h.key[skSandbox]
	plain := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": rc.URL + "/plain"})
	if plain["ordering"] != "none" {
		t.Fatalf("default ordering %v", plain["ordering"])
	}
	ordered := h.mustObj(http.StatusCreated, "POST", "/v1/webhook_endpoints", map[string]any{"url": rc.URL + "/ordered", "ordering": "object"})
	id := ordered["id"].(string)
	if ordered["ordering"] != "object" {
		t.Fatalf("created ordering %v", ordered["ordering"])
	}
	if got := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints/"+id, nil); got["ordering"] != "object" {
		t.Fatalf("read ordering %v", got["ordering"])
	}
	if got := h.mustObj(http.StatusOK, "PATCH", "/v1/webhook_endpoints/"+id, map[string]any{"description": "CRM"}); got["ordering"] != "object" {
		t.Fatalf("ordering after a PATCH of another member %v", got["ordering"])
	}
	// A refused value changes nothing (§15), the other members of its body included.
	r := h.do("PATCH", "/v1/webhook_endpoints/"+id, sk, map[string]any{"ordering": "fifo", "description": "changed"})
	expectError(t, r, http.StatusBadRequest, "parameter_invalid")
	if p := r.json(t)["error"].(map[string]any)["param"]; p != "ordering" {
		t.Fatalf("param %v (%s)", p, r.Body)
	}
	if got := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints/"+id, nil); got["ordering"] != "object" || got["description"] != "CRM" {
		t.Fatalf("after a refused PATCH %v", got)
	}
	if got := h.mustObj(http.StatusOK, "PATCH", "/v1/webhook_endpoints/"+id, map[string]any{"ordering": "none"}); got["ordering"] != "none" {
		t.Fatalf("ordering switched off %v", got["ordering"])
	}
	list := h.mustObj(http.StatusOK, "GET", "/v1/webhook_endpoints", nil)["data"].([]any)
	for _, e := range list {
		if e.(map[string]any)["ordering"] != "none" {
			t.Fatalf("listed %v", e)
		}
	}
}
