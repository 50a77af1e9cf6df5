package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/cliapi"
	"github.com/revops/revops/internal/testkit/cliapitest"
)

// TestTrigger runs every trigger against a real API over a fresh database: each prints
// one line per call and leaves an event of its type.
func TestTrigger(t *testing.T) {
	c, url := cliapitest.SandboxAPI(t)
	ctx := context.Background()
	for typ, want := range map[string]string{
		"account-created": "POST   /v1/accounts",
		"account-updated": "PATCH  /v1/accounts/",
		"account-deleted": "DELETE /v1/accounts/",
		"deal-created":    "→ deal draft",
		"deal-updated":    "/submit",
		"deal-signed":     "/sign",
		"deal-active":     "→ deal active",
	} {
		var out bytes.Buffer
		if err := trigger(ctx, c, typ, &out); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s printed:\n%s\nwant a line with %q", typ, out.String(), want)
		}
		evs, err := c.ListEvents(ctx, &revops.ListEventsParams{Type: revops.EventType(typ), Limit: 1})
		if err != nil || len(evs.Data) == 0 {
			t.Errorf("%s: no event of the type (%v)", typ, err)
		}
	}

	// An API error reads as before, under main's "revops: ".
	bad, err := cliapi.New(url, "sk_test_nope", revops.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	err = cliapi.Err(trigger(ctx, bad, "account-created", io.Discard))
	if err == nil || !strings.HasPrefix(err.Error(), "401 ") {
		t.Errorf("bad key: %v", err)
	}
}
