package e2e

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/models"
)

// Ordered endpoints on the real stack (CONTRACT §26): real Temporal and worker, the
// real API, PostgreSQL and an HTTPS receiver. The receiver fails the held object's
// deliveries for as long as the control object's are not all in: the control object's
// deliveries complete meanwhile (no head-of-line blocking across objects), only the held
// object's head is tried while it fails, and once the receiver recovers the held
// object's successful receipts come in sequence order, every one of them.
func TestOrderedLanes(t *testing.T) {
	s := newStack(t)
	w := s.worker()
	defer w.Stop()
	c := s.ts.GetDefaultClient()
	st := s.starter(c)
	defer sweepOutbox(st)()
	tn := s.tenant(t, "Lanes", st)
	fast := models.RetryPolicy{InitialIntervalMS: 500, BackoffCoefficient: 1, MaximumIntervalMS: 500, MaximumAttempts: 20}
	h := tn.endpoint([]string{"account-created", "account-updated"}, fast)
	if err := s.db.SQL().Exec(`UPDATE webhook_endpoints SET ordering = 'object' WHERE id = ?`, h.ep.ID).Error; err != nil {
		t.Fatal(err)
	}
	const changes = 5
	held := tn.call("POST", "/v1/accounts", map[string]any{"name": "Held"})["id"].(string)
	control := tn.call("POST", "/v1/accounts", map[string]any{"name": "Control"})["id"].(string)

	objectOf := eventObjects(t, s)
	var mu sync.Mutex
	controlDone := false
	var log []answered // what the receiver answered, in arrival order
	h.rc.SetRespond(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		mu.Lock()
		defer mu.Unlock()
		fail := !controlDone && objectOf(id) == held
		log = append(log, answered{id, !fail})
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	answers := func() []answered {
		mu.Lock()
		defer mu.Unlock()
		return append([]answered(nil), log...)
	}
	for i := range changes {
		tn.call("PATCH", "/v1/accounts/"+held, map[string]any{"name": "Held " + string(rune('a'+i))})
		tn.call("PATCH", "/v1/accounts/"+control, map[string]any{"name": "Control " + string(rune('a'+i))})
	}
	waitFor(t, 2*time.Minute, "the control object's deliveries while the held object's head fails", func() bool {
		n := 0
		for _, r := range receipts(t, s, answers(), control, objectOf) {
			if r.ok {
				n++
			}
		}
		return n >= changes+1
	})
	heldSoFar := receipts(t, s, answers(), held, objectOf)
	for _, r := range heldSoFar {
		if r.event != heldSoFar[0].event {
			t.Fatalf("while its head failed, the held lane sent %s after %s", r.event, heldSoFar[0].event)
		}
	}
	mu.Lock()
	controlDone = true
	mu.Unlock()
	tn.settled(2 * time.Minute)

	var last int64
	delivered := map[string]bool{}
	for _, r := range receipts(t, s, answers(), held, objectOf) {
		if !r.ok {
			continue
		}
		if r.sequence < last {
			t.Fatalf("held lane: sequence %d received after %d", r.sequence, last)
		}
		last, delivered[r.event] = r.sequence, true
	}
	if len(delivered) != changes+1 {
		t.Fatalf("held lane: %d events delivered, want %d", len(delivered), changes+1)
	}
}

// receipt is one request of an object's event at the receiver.
type receipt struct {
	event    string
	sequence int64
	ok       bool // answered 2xx (the held object's only once the receiver recovered)
}

// eventObjects maps an event id to its object, reading the event once.
func eventObjects(t *testing.T, s *stack) func(id string) string {
	var mu sync.Mutex
	known := map[string]string{}
	return func(id string) string {
		mu.Lock()
		defer mu.Unlock()
		if o, ok := known[id]; ok {
			return o
		}
		ev, _, err := s.db.Store.EventByID(context.Background(), id)
		if err != nil {
			return ""
		}
		known[id] = ev.ObjectID
		return ev.ObjectID
	}
}

// answered is one request at the receiver: its event and whether it was answered 2xx.
type answered struct {
	event string
	ok    bool
}

// receipts are the requests of object's events, in arrival order, with each event's
// sequence.
func receipts(t *testing.T, s *stack, got []answered, object string, objectOf func(string) string) []receipt {
	var out []receipt
	for _, a := range got {
		if objectOf(a.event) != object {
			continue
		}
		r := receipt{event: a.event, ok: a.ok}
		if ev := s.db.Load(t, a.event); ev.Sequence != nil {
			r.sequence = *ev.Sequence
		}
		out = append(out, r)
	}
	return out
}
