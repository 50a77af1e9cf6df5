package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The dashboard's test button refuses while a test of the endpoint is under way on
// another replica (CONTRACT §17: one at a time, across replicas), in its own words and
// without sending; once that test has answered, the button sends again.
func TestEndpointTestRefusedWhileOneRuns(t *testing.T) {
	rcv := newReceiver(t, http.StatusOK, "ok: Revops API Event Received.")
	a, b := replicas(t, rcv.siteArgs()...)
	u := a.newUser("Acme", "owner@acme.test")
	env := a.sandbox(u.orgID)
	c := a.client()
	c.mustLogin(u)
	tok := c.csrf("/dashboard/webhooks/new")
	if p := c.post("/dashboard/webhooks", endpointForm(tok, "url", rcv.srv.URL+"/hooks")); p.status != http.StatusSeeOther {
		t.Fatalf("add: %d: %.500s", p.status, p.body)
	}
	ep := a.endpoints(env)[0]

	// A test under way on replica B (the API's or its dashboard's): B holds the claim.
	ctx := context.Background()
	_, claim, err := b.store.ClaimEndpointTest(ctx, env, ep.ID, time.Now().UTC(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"csrf_token": {tok}, "type": {"account-created"}}
	p := c.post("/dashboard/webhooks/"+ep.ID+"/test", form)
	if p.status != http.StatusConflict || !strings.Contains(p.body, "A test is already being sent to this endpoint") || rcv.count() != 0 {
		t.Fatalf("test while B's runs: %d, receiver got %d: %.3000s", p.status, rcv.count(), p.body)
	}
	if err := b.store.ReleaseEndpointTest(ctx, env, ep.ID, claim); err != nil {
		t.Fatal(err)
	}
	if p := c.post("/dashboard/webhooks/"+ep.ID+"/test", form); p.status != http.StatusOK || !strings.Contains(p.body, "PASS") || rcv.count() != 1 {
		t.Fatalf("test after B's answered: %d, receiver got %d: %.3000s", p.status, rcv.count(), p.body)
	}
}
