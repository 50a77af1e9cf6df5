package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/testkit/apitest"
	"github.com/revops/revops/models"
)

// blockingDispatcher stands for a Temporal that does not answer: Dispatch blocks until
// released.
type blockingDispatcher struct {
	entered chan []models.Event
	release chan struct{}
}

func (b *blockingDispatcher) Dispatch(_ context.Context, events []models.Event) {
	b.entered <- events
	<-b.release
}

// CONTRACT §10: a response never waits for Temporal. The create answers while the
// dispatcher is still blocked, and the committed event is handed to it all the same.
func TestCreateDoesNotWaitForDispatch(t *testing.T) {
	b := &blockingDispatcher{entered: make(chan []models.Event, 1), release: make(chan struct{})}
	// Behind the start queue, as internal/app serves the API.
	h := newHarness(t, func(_ *config.Config, d *api.Deps) { apitest.Queue(d, b) })
	defer close(b.release)

	answered := make(chan response, 1)
	go func() {
		answered <- h.do("POST", "/v1/accounts", h.key[skSandbox], map[string]any{"name": "Acme", "external_id": "ext-acme"})
	}()
	var r response
	select {
	case r = <-answered:
	case <-time.After(30 * time.Second): // a guard against hanging, not a measure: the dispatcher never returns on its own
		t.Fatal("POST /v1/accounts waited for the dispatcher")
	}
	if r.Status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	id := r.json(t)["id"].(string)
	events := <-b.entered
	if len(events) != 1 || events[0].ObjectID != id {
		t.Fatalf("dispatcher got %+v, want the account's event", events)
	}
}

// /readyz fails only on required dependencies: without Temporal (optional) the API stays
// ready and says so in the body; without its database it is not ready.
func TestReadiness(t *testing.T) {
	down := errors.New("connection refused")
	tests := []struct {
		name         string
		dbErr, tmErr error
		status       int
		checks       map[string]string
	}{
		{"all up", nil, nil, 200, map[string]string{"database": "up", "temporal": "up"}},
		{"temporal unreachable", nil, down, 200, map[string]string{"database": "up", "temporal": "unreachable"}},
		{"database down", down, nil, 503, map[string]string{"database": "down", "temporal": "up"}},
		{"both down", down, down, 503, map[string]string{"database": "down", "temporal": "unreachable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(_ *config.Config, d *api.Deps) {
				d.Ready = []api.Check{
					{Name: "database", Check: func(context.Context) error { return tt.dbErr }},
					{Name: "temporal", Optional: true, Check: func(context.Context) error { return tt.tmErr }},
				}
			})
			if r := h.do("GET", "/healthz", "", nil); r.Status != 200 {
				t.Errorf("healthz %d", r.Status)
			}
			r := h.do("GET", "/readyz", "", nil)
			var body struct {
				Checks map[string]string `json:"checks"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil || r.Status != tt.status {
				t.Fatalf("readyz %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			for name, want := range tt.checks {
				if body.Checks[name] != want {
					t.Errorf("checks.%s = %q, want %q: %s", name, body.Checks[name], want, r.Body)
				}
			}
		})
	}
}
