package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

func TestDealLifecycleWritesEventsInOrder(t *testing.T) {
	rec := &objRecorder{}
	h := newHarness(t, withObjDispatcher(rec))
	acct := h.newObjAccount("Globex")
	d := h.mustObj(http.StatusCreated, "POST", "/v1/deals", pricedDealBody(acct))
	id := d["id"].(string)
	want := map[string]any{"object": "deal", "status": "draft", "net_price": "19999.00", "net_price_precision": "2",
		"original_net_price": "25000", "contract_activates_date": "2025-01-01"}
	for k, v := range want {
		if d[k] != v {
			t.Fatalf("%s = %v, want %v: %v", k, d[k], v, d)
		}
	}
	cust := d["customer"].(map[string]any)
	if len(cust) != 4 || cust["id"] != acct || cust["name"] != "Globex" || cust["external_id"] != "ext-Globex" || cust["billing_email"] != "ap@globex.example" {
		t.Fatalf("customer %v", cust)
	}
	sku := d["skus"].([]any)[0].(map[string]any)
	term := d["terms"].([]any)[0].(map[string]any)
	if sku["id"] == "" || sku["unit_price"] != "1999.90" || term["id"] == "" || term["description"] != nil || term["billing_frequency"] != "annual" {
		t.Fatalf("items %v %v", sku, term)
	}
	checkObjTimes(t, d)

	for _, step := range []struct{ action, status string }{
		{"submit", "pending_approval"}, {"approve", "approved"}, {"sign", "signed"}, {"activate", "active"},
	} {
		got := h.mustObj(http.StatusOK, "POST", "/v1/deals/"+id+"/"+step.action, nil)
		if got["status"] != step.status {
			t.Fatalf("%s: status %v", step.action, got["status"])
		}
	}
	evs := h.objEvents(id)
	if got := objEventTypes(evs); got != "deal-created deal-updated deal-updated deal-updated deal-signed deal-updated deal-active" {
		t.Fatalf("deal events %s", got)
	}
	statuses := []string{"draft", "pending_approval", "approved", "signed", "signed", "active", "active"}
	for i, ev := range evs {
		snap := checkObjPayload(t, ev, "deal")
		if snap["status"] != statuses[i] {
			t.Errorf("event %d (%s) snapshot status %v, want %s", i, ev.Type, snap["status"], statuses[i])
		}
	}
	if evs[5].Seq != 1 || evs[6].Seq != 2 || evs[3].Seq != 1 || evs[4].Seq != 2 {
		t.Errorf("seq within a change: %d %d %d %d", evs[3].Seq, evs[4].Seq, evs[5].Seq, evs[6].Seq)
	}
	acctEvs := h.objEvents(acct)
	if objEventTypes(acctEvs) != "account-created account-updated" {
		t.Fatalf("account events %s", objEventTypes(acctEvs))
	}
	// account-updated is the third event of the activation, after deal-active.
	if acctEvs[1].Seq != 3 || acctEvs[1].Time != evs[6].Time || checkObjPayload(t, acctEvs[1], "account")["status"] != "active" {
		t.Fatalf("account-updated of the activation: %+v", acctEvs[1])
	}
	if a := h.mustObj(http.StatusOK, "GET", "/v1/accounts/"+acct, nil); a["status"] != "active" {
		t.Fatalf("account not activated: %v", a)
	}
	if n := len(rec.ids()); n != 1+7+1 {
		t.Fatalf("dispatched %d events, want 9", n)
	}
	// A second deal activating for the now active account leaves the account alone.
	d2 := h.mustObj(http.StatusCreated, "POST", "/v1/deals", mergeBody(pricedDealBody(acct), map[string]any{"submit": true}))
	if d2["status"] != "pending_approval" || objEventTypes(h.objEvents(d2["id"].(string))) != "deal-created" {
		t.Fatalf("create with submit: %v", d2)
	}
	for _, a := range []string{"approve", "sign", "activate"} {
		h.mustObj(http.StatusOK, "POST", "/v1/deals/"+d2["id"].(string)+"/"+a, nil)
	}
	if objEventTypes(h.objEvents(acct)) != "account-created account-updated" {
		t.Fatalf("active account updated again: %s", objEventTypes(h.objEvents(acct)))
	}
}

func mergeBody(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// TestDealInvalidTransitions tries every refused action from every reachable status.
func TestDealInvalidTransitions(t *testing.T) {
	h := newHarness(t)
	acct := h.newObjAccount("Initech")
	paths := map[string][]string{
		"draft":            nil,
		"pending_approval": {"submit"},
		"approved":         {"submit", "approve"},
		"signed":           {"submit", "approve", "sign"},
		"active":           {"submit", "approve", "sign", "activate"},
		"void":             {"void"},
	}
	allowed := map[string]map[string]bool{
		"draft":            {"submit": true, "void": true, "edit": true},
		"pending_approval": {"approve": true, "void": true, "edit": true},
		"approved":         {"sign": true, "void": true},
		"signed":           {"activate": true},
	}
	for status, path := range paths {
		id := h.mustObj(http.StatusCreated, "POST", "/v1/deals", pricedDealBody(acct))["id"].(string)
		for _, a := range path {
			h.mustObj(http.StatusOK, "POST", "/v1/deals/"+id+"/"+a, nil)
		}
		before := objEventTypes(h.objEvents(id))
		for _, action := range []string{"submit", "approve", "sign", "activate", "void", "edit"} {
			if allowed[status][action] {
				continue
			}
			method, path, body := "POST", "/v1/deals/"+id+"/"+action, any(nil)
			if action == "edit" {
				method, path, body = "PATCH", "/v1/deals/"+id, map[string]any{"opportunity_id": "changed"}
			}
			r := h.do(method, path, h.key[skSandbox], body)
			expectError(t, r, http.StatusConflict, "invalid_state_transition")
			if !strings.Contains(string(r.Body), "status is "+status) {
				t.Errorf("%s on %s: message lacks the status: %s", action, status, r.Body)
			}
		}
		if got := objEventTypes(h.objEvents(id)); got != before {
			t.Errorf("%s: refused actions wrote events: %s", status, got)
		}
		if d := h.mustObj(http.StatusOK, "GET", "/v1/deals/"+id, nil); d["status"] != status {
			t.Errorf("status %v, want %s", d["status"], status)
		}
	}
}

func TestDealSignNeedsNetPrice(t *testing.T) {
	h := newHarness(t)
	acct := h.newObjAccount("Hooli")
	id := h.mustObj(http.StatusCreated, "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": acct}, "net_price_precision": "2"})["id"].(string)
	h.mustObj(http.StatusOK, "POST", "/v1/deals/"+id+"/submit", nil)
	h.mustObj(http.StatusOK, "POST", "/v1/deals/"+id+"/approve", nil)
	r := h.do("POST", "/v1/deals/"+id+"/sign", h.key[skSandbox], nil)
	expectError(t, r, http.StatusConflict, "invalid_state_transition")
	if !strings.Contains(string(r.Body), "net_price, net_price_currency") {
		t.Fatalf("message does not name the missing fields: %s", r.Body)
	}
	if objEventTypes(h.objEvents(id)) != "deal-created deal-updated deal-updated" {
		t.Fatalf("events %s", objEventTypes(h.objEvents(id)))
	}
}

func TestDealPatchNoOpAndWholesaleItems(t *testing.T) {
	rec := &objRecorder{}
	h := newHarness(t, withObjDispatcher(rec))
	acct := h.newObjAccount("Soylent")
	d := h.mustObj(http.StatusCreated, "POST", "/v1/deals", pricedDealBody(acct))
	id := d["id"].(string)
	skus := d["skus"].([]any)
	// Sending back what GET shows (items with their ids) changes nothing.
	same := map[string]any{"customer": map[string]any{"id": acct}, "net_price": "19999.00", "skus": skus, "terms": d["terms"], "opportunity_id": "opp-1"}
	noop := h.mustObj(http.StatusOK, "PATCH", "/v1/deals/"+id, same)
	if noop["updated_at"] != d["updated_at"] || objEventTypes(h.objEvents(id)) != "deal-created" || len(rec.ids()) != 2 {
		t.Fatalf("no-op PATCH wrote: %v events %s", noop, objEventTypes(h.objEvents(id)))
	}
	newSkus := []any{
		map[string]any{"code": "ENT", "name": "Enterprise", "quantity": "1", "unit_price": "50000.00"},
		map[string]any{"code": "SEAT", "name": "Seats", "quantity": "2.5", "unit_price": "10"},
	}
	p := h.mustObj(http.StatusOK, "PATCH", "/v1/deals/"+id, map[string]any{"skus": newSkus, "terms": []any{}, "contract_activates_date": nil})
	got := p["skus"].([]any)
	if len(got) != 2 || got[0].(map[string]any)["code"] != "ENT" || got[0].(map[string]any)["id"] == skus[0].(map[string]any)["id"] ||
		len(p["terms"].([]any)) != 0 || p["contract_activates_date"] != nil {
		t.Fatalf("items not replaced wholesale: %v", p)
	}
	evs := h.objEvents(id)
	if objEventTypes(evs) != "deal-created deal-updated" {
		t.Fatalf("events %s", objEventTypes(evs))
	}
	if snap := checkObjPayload(t, evs[1], "deal"); len(snap["skus"].([]any)) != 2 || snap["updated_at"] != p["updated_at"] {
		t.Fatalf("deal-updated snapshot %v", snap)
	}
	r := h.do("PATCH", "/v1/deals/"+id, h.key[skSandbox], map[string]any{"skus": []any{map[string]any{"id": "not-ours", "code": "x", "name": "x", "quantity": "1", "unit_price": "1"}}})
	expectError(t, r, http.StatusBadRequest, "parameter_invalid")
}

func TestDealRequestFaults(t *testing.T) {
	h := newHarness(t)
	acct := h.newObjAccount("Acme")
	other := h.do("POST", "/v1/accounts", h.key["secret live"], map[string]any{"name": "Live one"}).json(t)["id"].(string)
	id := h.mustObj(http.StatusCreated, "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": acct}})["id"].(string)
	cust := map[string]any{"id": acct}
	cases := []struct {
		name, method, path string
		body               any
		code, param        string
		faults             int
	}{
		{"customer missing", "POST", "/v1/deals", map[string]any{}, "parameter_missing", "customer", 1},
		{"unknown customer", "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": "nope"}}, "parameter_invalid", "customer.id", 1},
		{"customer of the other environment", "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": other}}, "parameter_invalid", "customer.id", 1},
		{"every field fault", "POST", "/v1/deals", map[string]any{"customer": cust, "net_price_currency": "usd", "net_price_precision": "8",
			"contract_activates_date": "01/02/2025", "signed_contract_url": "http://x.example"}, "parameter_invalid", "contract_activates_date", 4},
		{"price digits against precision", "POST", "/v1/deals", map[string]any{"customer": cust, "net_price": "10.5", "net_price_currency": "USD", "net_price_precision": "2"},
			"parameter_invalid", "net_price", 1},
		{"price is a number", "POST", "/v1/deals", []byte(`{"customer":{"id":"` + acct + `"},"net_price":10.5}`), "parameter_invalid", "net_price", 1},
		{"read-only fields", "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": acct, "name": "x"}, "id": "x", "status": "active"},
			"parameter_read_only", "customer.name", 3},
		{"read-only on patch", "PATCH", "/v1/deals/" + id, map[string]any{"status": "approved"}, "parameter_read_only", "status", 1},
		{"unknown field", "POST", "/v1/deals", map[string]any{"customer": cust, "discount": "5"}, "unknown_parameter", "discount", 1},
		{"unknown customer member", "PATCH", "/v1/deals/" + id, map[string]any{"customer": map[string]any{"id": acct, "emial": "x"}}, "unknown_parameter", "customer.emial", 1},
		{"unknown sku member", "PATCH", "/v1/deals/" + id, map[string]any{"skus": []any{map[string]any{"code": "a", "name": "a", "quantity": "1", "unit_price": "1", "price": "1"}}},
			"unknown_parameter", "price", 1},
		{"submit only on create", "PATCH", "/v1/deals/" + id, map[string]any{"submit": true}, "unknown_parameter", "submit", 1},
		{"body on an action", "POST", "/v1/deals/" + id + "/submit", map[string]any{"note": "x"}, "unknown_parameter", "note", 1},
		{"sku faults", "PATCH", "/v1/deals/" + id, map[string]any{"skus": []any{map[string]any{"code": "a", "quantity": "-1", "unit_price": "1"}}},
			"parameter_missing", "skus[0].name", 2},
		{"bad status filter", "GET", "/v1/deals?status=won", nil, "parameter_invalid", "status", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.do(c.method, c.path, h.key[skSandbox], c.body)
			expectError(t, r, http.StatusBadRequest, c.code)
			e := r.json(t)["error"].(map[string]any)
			if e["param"] != c.param {
				t.Fatalf("param %v, want %s: %s", e["param"], c.param, r.Body)
			}
			if errs, _ := e["errors"].([]any); len(errs) != c.faults {
				t.Fatalf("%d faults, want %d: %s", len(errs), c.faults, r.Body)
			}
		})
	}
	if objEventTypes(h.objEvents(id)) != "deal-created" {
		t.Fatalf("faulty requests wrote events: %s", objEventTypes(h.objEvents(id)))
	}
	if l := h.mustObj(http.StatusOK, "GET", "/v1/deals", nil)["data"].([]any); len(l) != 1 {
		t.Fatalf("faulty creates wrote deals: %d", len(l))
	}
}

func TestDealsAreIsolatedAndListed(t *testing.T) {
	h := newHarness(t)
	a1, a2 := h.newObjAccount("One"), h.newObjAccount("Two")
	var ids []string
	for _, a := range []string{a1, a2, a1} {
		ids = append(ids, h.mustObj(http.StatusCreated, "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": a}})["id"].(string))
	}
	live := h.key["secret live"]
	expectError(t, h.do("GET", "/v1/deals/"+ids[0], live, nil), http.StatusNotFound, "resource_missing")
	expectError(t, h.do("PATCH", "/v1/deals/"+ids[0], live, map[string]any{"opportunity_id": "x"}), http.StatusNotFound, "resource_missing")
	for _, a := range []string{"submit", "approve", "sign", "activate", "void"} {
		expectError(t, h.do("POST", "/v1/deals/"+ids[0]+"/"+a, live, nil), http.StatusNotFound, "resource_missing")
	}
	expectError(t, h.do("POST", "/v1/deals/"+ids[0]+"/reopen", h.key[skSandbox], nil), http.StatusNotFound, "resource_missing")
	if objEventTypes(h.objEvents(ids[0])) != "deal-created" {
		t.Fatal("the live key changed a sandbox deal")
	}
	l := h.mustObj(http.StatusOK, "GET", "/v1/deals?customer="+a1, nil)["data"].([]any)
	if len(l) != 2 || l[0].(map[string]any)["id"] != ids[2] || l[1].(map[string]any)["id"] != ids[0] ||
		l[0].(map[string]any)["customer"].(map[string]any)["name"] != "One" {
		t.Fatalf("customer filter %v", l)
	}
	h.mustObj(http.StatusOK, "POST", "/v1/deals/"+ids[1]+"/void", nil)
	if l := h.mustObj(http.StatusOK, "GET", "/v1/deals?status=void&limit=1", nil); len(l["data"].([]any)) != 1 || l["has_more"] != false {
		t.Fatalf("status filter %v", l)
	}
}

// TestDealConcurrentActions: of many simultaneous identical actions on one deal exactly
// one succeeds, and the events are written once.
func TestDealConcurrentActions(t *testing.T) {
	h := newHarness(t)
	acct := h.newObjAccount("Race")
	id := h.mustObj(http.StatusCreated, "POST", "/v1/deals", pricedDealBody(acct))["id"].(string)
	h.mustObj(http.StatusOK, "POST", "/v1/deals/"+id+"/submit", nil)
	for _, action := range []string{"approve", "sign", "activate"} {
		const n = 12
		codes := make(chan int, n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes <- h.do("POST", "/v1/deals/"+id+"/"+action, h.key[skSandbox], nil).Status
			}()
		}
		wg.Wait()
		close(codes)
		count := map[int]int{}
		for c := range codes {
			count[c]++
		}
		if count[http.StatusOK] != 1 || count[http.StatusConflict] != n-1 {
			t.Fatalf("%s: outcomes %v", action, count)
		}
	}
	// approve racing void from pending_approval: exactly one wins.
	id2 := h.mustObj(http.StatusCreated, "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": acct}, "submit": true})["id"].(string)
	var wg sync.WaitGroup
	results := make([]int, 2)
	for i, a := range []string{"approve", "void"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = h.do("POST", "/v1/deals/"+id2+"/"+a, h.key[skSandbox], nil).Status
		}()
	}
	wg.Wait()
	if fmt.Sprint(results) != "[200 409]" && fmt.Sprint(results) != "[409 200]" {
		// approve then void is also legal in sequence; only both-from-pending is wrong.
		if results[0] != 200 || results[1] != 200 || objEventTypes(h.objEvents(id2)) != "deal-created deal-updated deal-updated" {
			t.Fatalf("approve/void race: %v, events %s", results, objEventTypes(h.objEvents(id2)))
		}
	}
	if got := objEventTypes(h.objEvents(id)); got != "deal-created deal-updated deal-updated deal-updated deal-signed deal-updated deal-active" {
		t.Fatalf("events %s", got)
	}
	if got := objEventTypes(h.objEvents(acct)); got != "account-created account-updated" {
		t.Fatalf("account events %s", got)
	}
}

// TestDealOfDeprovisionedAccount: the deal stays readable and movable up to signing, but
// cannot be activated for billing, and no deal can be moved onto that account.
func TestDealOfDeprovisionedAccount(t *testing.T) {
	h := newHarness(t)
	acct, spare := h.newObjAccount("Gone"), h.newObjAccount("Spare")
	id := h.mustObj(http.StatusCreated, "POST", "/v1/deals", mergeBody(pricedDealBody(acct), map[string]any{"submit": true}))["id"].(string)
	other := h.mustObj(http.StatusCreated, "POST", "/v1/deals", map[string]any{"customer": map[string]any{"id": spare}})["id"].(string)
	h.mustObj(http.StatusOK, "POST", "/v1/deals/"+id+"/approve", nil)
	h.mustObj(http.StatusOK, "POST", "/v1/deals/"+id+"/sign", nil)
	h.mustObj(http.StatusOK, "DELETE", "/v1/accounts/"+acct, nil)
	expectError(t, h.do("POST", "/v1/deals/"+id+"/activate", h.key[skSandbox], nil), http.StatusConflict, "invalid_state_transition")
	expectError(t, h.do("PATCH", "/v1/deals/"+other, h.key[skSandbox], map[string]any{"customer": map[string]any{"id": acct}}), http.StatusConflict, "invalid_state_transition")
	if d := h.mustObj(http.StatusOK, "GET", "/v1/deals/"+id, nil); d["status"] != "signed" {
		t.Fatalf("deal %v", d)
	}
	if got := objEventTypes(h.objEvents(acct)); got != "account-created account-deleted" {
		t.Fatalf("account events %s", got)
	}
	// Moving a draft deal to another live account of the environment is an edit.
	moved := h.mustObj(http.StatusOK, "PATCH", "/v1/deals/"+other, map[string]any{"customer": map[string]any{"id": h.newObjAccount("Next")}})
	if moved["customer"].(map[string]any)["name"] != "Next" || objEventTypes(h.objEvents(other)) != "deal-created deal-updated" {
		t.Fatalf("moved deal %v", moved)
	}
}
