package api_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestAccountCreateShapeAndEvent(t *testing.T) {
	rec := &objRecorder{}
	h := newHarness(t, withObjDispatcher(rec))
	a := h.mustObj(http.StatusCreated, "POST", "/v1/accounts", map[string]any{
		"name": "Globex", "domain": "globex.example", "properties": map[string]any{"tier": "gold", "seats": 10, "vip": true},
	})
	expectMembers(t, a, "id", "object", "name", "external_id", "domain", "billing_email", "status", "properties", "created_at", "updated_at")
	if a["object"] != "account" || a["status"] != "draft" || a["external_id"] != nil || a["billing_email"] != nil {
		t.Fatalf("account %v", a)
	}
	checkObjTimes(t, a)
	id := a["id"].(string)
	evs := h.objEvents(id)
	if objEventTypes(evs) != "account-created" {
		t.Fatalf("events %s", objEventTypes(evs))
	}
	snap := checkObjPayload(t, evs[0], "account")
	if snap["name"] != "Globex" || snap["status"] != "draft" || snap["updated_at"] != a["updated_at"] {
		t.Fatalf("snapshot %v vs response %v", snap, a)
	}
	if ids := rec.ids(); len(ids) != 1 || ids[0] != evs[0].ID {
		t.Fatalf("dispatched %v, want %s", ids, evs[0].ID)
	}
	if got := h.mustObj(http.StatusOK, "GET", "/v1/accounts/"+id, nil); got["updated_at"] != a["updated_at"] || got["name"] != "Globex" {
		t.Fatalf("GET %v", got)
	}
}

func TestAccountPatchMergesPropertiesAndNoOpEmitsNothing(t *testing.T) {
	rec := &objRecorder{}
	h := newHarness(t, withObjDispatcher(rec))
	id := h.mustObj(http.StatusCreated, "POST", "/v1/accounts", map[string]any{
		"name": "Globex", "properties": map[string]any{"tier": "gold", "seats": 10},
	})["id"].(string)
	a := h.mustObj(http.StatusOK, "PATCH", "/v1/accounts/"+id, map[string]any{"properties": map[string]any{"tier": nil, "region": "eu"}})
	props := a["properties"].(map[string]any)
	if len(props) != 2 || props["region"] != "eu" || props["seats"] != float64(10) {
		t.Fatalf("properties %v", props)
	}
	before := objEventTypes(h.objEvents(id))
	if before != "account-created account-updated" {
		t.Fatalf("events %s", before)
	}
	dispatched := len(rec.ids())
	noop := h.mustObj(http.StatusOK, "PATCH", "/v1/accounts/"+id, []byte(`{"name":"Globex","properties":{"seats":10.0,"gone":null}}`))
	if noop["updated_at"] != a["updated_at"] || objEventTypes(h.objEvents(id)) != before || len(rec.ids()) != dispatched {
		t.Fatalf("no-op PATCH changed something: %v (before %v), events %s, dispatched %d→%d", noop, a, objEventTypes(h.objEvents(id)), dispatched, len(rec.ids()))
	}
	h.mustObj(http.StatusOK, "PATCH", "/v1/accounts/"+id, map[string]any{"billing_email": "ap@globex.example"})
	cleared := h.mustObj(http.StatusOK, "PATCH", "/v1/accounts/"+id, map[string]any{"billing_email": nil})
	if v, ok := cleared["billing_email"]; !ok || v != nil {
		t.Fatalf("billing_email not cleared to null: %v", cleared)
	}
}

func TestAccountLifecycleAndDeprovisioned(t *testing.T) {
	h := newHarness(t)
	id := h.newObjAccount("Initech")
	if a := h.mustObj(http.StatusOK, "POST", "/v1/accounts/"+id+"/activate", nil); a["status"] != "active" {
		t.Fatalf("activate: %v", a)
	}
	r := h.do("POST", "/v1/accounts/"+id+"/activate", h.key[skSandbox], nil)
	expectError(t, r, http.StatusConflict, "invalid_state_transition")
	if a := h.mustObj(http.StatusOK, "DELETE", "/v1/accounts/"+id, nil); a["status"] != "deprovisioned" {
		t.Fatalf("delete: %v", a)
	}
	if objEventTypes(h.objEvents(id)) != "account-created account-updated account-deleted" {
		t.Fatalf("events %s", objEventTypes(h.objEvents(id)))
	}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"PATCH", "/v1/accounts/" + id, map[string]any{"name": "New name"}},
		{"PATCH", "/v1/accounts/" + id, map[string]any{}},
		{"POST", "/v1/accounts/" + id + "/activate", nil},
		{"DELETE", "/v1/accounts/" + id, nil},
		{"POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": id}}},
	} {
		r := h.do(c.method, c.path, h.key[skSandbox], c.body)
		expectError(t, r, http.StatusConflict, "invalid_state_transition")
		if !strings.Contains(string(r.Body), "deprovisioned") {
			t.Errorf("%s %s: message does not name the status: %s", c.method, c.path, r.Body)
		}
	}
	if a := h.mustObj(http.StatusOK, "GET", "/v1/accounts/"+id, nil); a["status"] != "deprovisioned" || a["name"] != "Initech" {
		t.Fatalf("deprovisioned account not readable as it was: %v", a)
	}
	if objEventTypes(h.objEvents(id)) != "account-created account-updated account-deleted" {
		t.Fatalf("refused changes wrote events: %s", objEventTypes(h.objEvents(id)))
	}
	// Deleting a draft account sends account-deleted only.
	draft := h.newObjAccount("Hooli")
	h.mustObj(http.StatusOK, "DELETE", "/v1/accounts/"+draft, nil)
	if objEventTypes(h.objEvents(draft)) != "account-created account-deleted" {
		t.Fatalf("events %s", objEventTypes(h.objEvents(draft)))
	}
}

func TestAccountRequestFaults(t *testing.T) {
	h := newHarness(t)
	id := h.newObjAccount("Umbrella")
	cases := []struct {
		name, method, path string
		body               any
		code, param        string
		faults             int
	}{
		{"name missing", "POST", "/v1/accounts", map[string]any{"domain": "x.example"}, "parameter_missing", "name", 1},
		{"every fault listed", "POST", "/v1/accounts", map[string]any{"name": "", "domain": "not a domain", "billing_email": "nope", "properties": map[string]any{"a": []any{1}}},
			"parameter_invalid", "name", 4},
		{"read-only fields", "POST", "/v1/accounts", map[string]any{"name": "x", "id": "abc", "status": "active"}, "parameter_read_only", "id", 2},
		{"read-only on patch", "PATCH", "/v1/accounts/" + id, map[string]any{"created_at": "2020-01-01T00:00:00Z"}, "parameter_read_only", "created_at", 1},
		{"unknown field", "PATCH", "/v1/accounts/" + id, map[string]any{"nmae": "typo"}, "unknown_parameter", "nmae", 1},
		{"wrong type", "PATCH", "/v1/accounts/" + id, map[string]any{"name": 5}, "parameter_invalid", "name", 1},
		{"body on activate", "POST", "/v1/accounts/" + id + "/activate", map[string]any{"force": true}, "unknown_parameter", "force", 1},
		{"array body", "POST", "/v1/accounts", []any{}, "invalid_json", "", 0},
		{"bad status filter", "GET", "/v1/accounts?status=gone", nil, "parameter_invalid", "status", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.do(c.method, c.path, h.key[skSandbox], c.body)
			expectError(t, r, http.StatusBadRequest, c.code)
			e := r.json(t)["error"].(map[string]any)
			if c.param != "" && e["param"] != c.param {
				t.Fatalf("param %v, want %s: %s", e["param"], c.param, r.Body)
			}
			if errs, _ := e["errors"].([]any); len(errs) != c.faults {
				t.Fatalf("%d faults, want %d: %s", len(errs), c.faults, r.Body)
			}
		})
	}
	if evs := h.objEvents(id); objEventTypes(evs) != "account-created" {
		t.Fatalf("faulty requests wrote events: %s", objEventTypes(evs))
	}
}

func TestAccountsAreIsolatedAndListed(t *testing.T) {
	h := newHarness(t)
	ids := []string{h.newObjAccount("A"), h.newObjAccount("B"), h.newObjAccount("C")}
	live := h.key["secret live"]
	for _, c := range [][2]string{{"GET", ""}, {"PATCH", ""}, {"DELETE", ""}, {"POST", "/activate"}} {
		var body any
		if c[0] == "PATCH" {
			body = map[string]any{"name": "x"}
		}
		expectError(t, h.do(c[0], "/v1/accounts/"+ids[0]+c[1], live, body), http.StatusNotFound, "resource_missing")
	}
	if l := h.do("GET", "/v1/accounts", live, nil).json(t); len(l["data"].([]any)) != 0 {
		t.Fatalf("live sees sandbox accounts: %v", l)
	}
	expectError(t, h.do("GET", "/v1/accounts", h.key["public sandbox"], nil), http.StatusForbidden, "secret_key_required")
	page := h.mustObj(http.StatusOK, "GET", "/v1/accounts?limit=2", nil)
	data := page["data"].([]any)
	if page["object"] != "list" || len(data) != 2 || page["has_more"] != true || data[0].(map[string]any)["id"] != ids[2] {
		t.Fatalf("page 1 %v", page)
	}
	last := data[1].(map[string]any)["id"].(string)
	page = h.mustObj(http.StatusOK, "GET", "/v1/accounts?limit=2&starting_after="+last, nil)
	if data := page["data"].([]any); len(data) != 1 || page["has_more"] != false || data[0].(map[string]any)["id"] != ids[0] {
		t.Fatalf("page 2 %v", page)
	}
	h.mustObj(http.StatusOK, "POST", "/v1/accounts/"+ids[1]+"/activate", nil)
	if l := h.mustObj(http.StatusOK, "GET", "/v1/accounts?status=active", nil)["data"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != ids[1] {
		t.Fatalf("status filter %v", l)
	}
}
