package listener_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/listener"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/testkit/cliapitest"
)

// sandboxAPI is a real API server over a fresh PostgreSQL database (allowing loopback
// destinations, as the listener's are) and a client with a secret sandbox key.
func sandboxAPI(t *testing.T) *revops.Client {
	c, _ := cliapitest.SandboxAPI(t, "--webhook-allow-private")
	return c
}

func endpoints(t *testing.T, c *revops.Client) map[string]listener.Endpoint {
	t.Helper()
	var page struct{ Data []listener.Endpoint }
	if err := c.Do(context.Background(), http.MethodGet, "/v1/webhook_endpoints?limit=100", nil, &page); err != nil {
		t.Fatal(err)
	}
	out := map[string]listener.Endpoint{}
	for _, ep := range page.Data {
		out[ep.Description] = ep
	}
	return out
}

// TestListenEndpointLifecycle: listen creates its own temporary endpoint with the asked
// types, removes what killed listens of this host left, never touches the configured
// endpoint nor live or foreign listens' endpoints, and deletes its own on exit.
func TestListenEndpointLifecycle(t *testing.T) {
	ctx := context.Background()
	c := sandboxAPI(t)
	var configured listener.Endpoint
	if err := c.Do(ctx, http.MethodPost, "/v1/webhook_endpoints",
		map[string]any{"url": "https://127.0.0.1:9/configured", "description": "Billing"}, &configured); err != nil {
		t.Fatal(err)
	}
	running := map[int]bool{100: true, 300: true} // 200 was killed
	alive := func(pid int) bool { return running[pid] }
	owner := func(pid int, host string) listener.Owner { return listener.Owner{PID: pid, Host: host, Alive: alive} }
	const receiver = "https://127.0.0.1:4443/webhooks"
	// Endpoints of other listens, as they made them (Open would already clean up).
	for _, who := range []string{"200@devbox", "300@devbox", "200@otherbox"} {
		if err := c.Do(ctx, http.MethodPost, "/v1/webhook_endpoints",
			map[string]any{"url": receiver, "description": listener.Marker + " " + who}, nil); err != nil {
			t.Fatal(err)
		}
	}
	killed := endpoints(t, c)[listener.Marker+" 200@devbox"]

	me := owner(100, "devbox")
	ep, removed, err := listener.Open(ctx, c, me, receiver, "POST", "", listener.ParseEvents("deal-signed, account-created,"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{killed.ID}) {
		t.Fatalf("removed %v, want only the killed listen's %s", removed, killed.ID)
	}
	if ep.Description != "revops listen (temporary) 100@devbox" || ep.URL != receiver ||
		!slices.Equal(ep.EventTypes, []string{"deal-signed", "account-created"}) || !strings.HasPrefix(ep.Secret, "whsec_") {
		t.Fatalf("listen's endpoint %+v", ep)
	}
	var names []string
	for d := range endpoints(t, c) {
		names = append(names, d)
	}
	slices.Sort(names)
	want := []string{"Billing", listener.Marker + " 100@devbox", listener.Marker + " 200@otherbox", listener.Marker + " 300@devbox"}
	if !slices.Equal(names, want) {
		t.Fatalf("endpoints %q, want %q", names, want)
	}
	if got := endpoints(t, c)["Billing"]; got.URL != configured.URL || !slices.Equal(got.EventTypes, []string{"*"}) {
		t.Fatalf("the configured endpoint changed: %+v", got)
	}
	for _, id := range []string{ep.ID, ep.ID} { // on exit; twice is harmless
		if err := listener.Close(ctx, c, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := endpoints(t, c)[ep.Description]; ok {
		t.Fatal("listen's endpoint is still there after Close")
	}

	// An ed25519 endpoint (--signing ed25519): no secret, its public key verifies.
	signed, _, err := listener.Open(ctx, c, me, receiver, "POST", "ed25519", nil)
	if err != nil || signed.Secret != "" || !strings.HasPrefix(signed.PublicKey, "whpk_") || signed.Key() != signed.PublicKey {
		t.Fatalf("ed25519 endpoint: %+v %v", signed, err)
	}
	_ = listener.Close(ctx, c, signed.ID)
	if _, _, err := listener.Open(ctx, c, me, receiver, "POST", "rsa", nil); err == nil {
		t.Fatal("an unknown scheme was accepted")
	}

	// Every type by default; an unknown type is refused by the API and creates nothing.
	all, _, err := listener.Open(ctx, c, me, receiver, "GET", "", listener.ParseEvents(""))
	if err != nil || !slices.Equal(all.EventTypes, []string{"*"}) {
		t.Fatalf("default types: %+v %v", all, err)
	}
	_ = listener.Close(ctx, c, all.ID)
	n := len(endpoints(t, c))
	_, _, err = listener.Open(ctx, c, me, receiver, "POST", "", []string{"deal-signed", "deal-exploded"})
	var apiErr *revops.Error
	if !errors.As(err, &apiErr) || apiErr.Code != "invalid_event_type" || !strings.Contains(err.Error(), "deal-exploded") {
		t.Fatalf("unknown type: %v", err)
	}
	if len(endpoints(t, c)) != n {
		t.Fatal("a refused listen created an endpoint")
	}
}

func TestLeftOverRule(t *testing.T) {
	o := listener.Owner{PID: 100, Host: "devbox", Alive: func(pid int) bool { return pid == 300 }}
	for _, tc := range []struct {
		description string
		leftOver    bool
	}{
		{listener.Marker + " 200@devbox", true},    // this host, process gone
		{listener.Marker + " 100@devbox", true},    // this pid, reused: not another live listen
		{listener.Marker + " 300@devbox", false},   // still running
		{listener.Marker + " 200@otherbox", false}, // another machine: cannot tell
		{"Billing", false},
		{listener.Marker, false},
		{listener.Marker + " x@devbox", false},
		{listener.Marker + " 200", false},
		{"my " + listener.Marker + " 200@devbox", false},
	} {
		ep := listener.Endpoint{Description: tc.description}
		if got := listener.IsLeftOver(o, ep); got != tc.leftOver {
			t.Errorf("%q: left over %v, want %v", tc.description, got, tc.leftOver)
		}
	}
}

// `revops listen --events` takes every type the API's catalog has, operational ones
// included (listed by name: "*" never matches them), and no list of its own: each
// operational type of the catalog makes a listen endpoint subscribed to it, with the
// seed's types beside it, and a name the catalog lacks is the API's invalid_event_type.
func TestListenEventsFromTheCatalog(t *testing.T) {
	ctx := context.Background()
	c := sandboxAPI(t)
	me := listener.Owner{PID: 100, Host: "devbox", Alive: func(int) bool { return true }}
	var operational []string
	for _, et := range catalog.All() {
		if et.Operational {
			operational = append(operational, et.Name)
		}
	}
	if !slices.Contains(operational, catalog.EndpointDisabled) {
		t.Fatalf("the catalog's operational types %v lack endpoint-disabled", operational)
	}
	for _, name := range operational {
		types := listener.ParseEvents(name + ", deal-signed")
		ep, _, err := listener.Open(ctx, c, me, "https://127.0.0.1:4443/webhooks", "POST", "", types)
		if err != nil {
			t.Fatalf("--events %s: %v", name, err)
		}
		if !slices.Equal(ep.EventTypes, []string{name, "deal-signed"}) {
			t.Errorf("--events %s: the endpoint lists %v", name, ep.EventTypes)
		}
		if err := listener.Close(ctx, c, ep.ID); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := listener.Open(ctx, c, me, "https://127.0.0.1:4443/webhooks", "POST", "", []string{"endpoint-nope"})
	if err == nil || !strings.Contains(err.Error(), "invalid_event_type") || !strings.Contains(err.Error(), "endpoint-nope") {
		t.Fatalf("an unknown type: %v", err)
	}
}
