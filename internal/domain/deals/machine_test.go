package deals

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/apperr"
)

// TestTransitionEveryPair checks every (status, action) pair against CONTRACT §7's table,
// written out here independently of the machine map.
func TestTransitionEveryPair(t *testing.T) {
	type want struct {
		to     string
		events []string
	}
	upd := []string{EventUpdated}
	allowed := map[[2]string]want{
		{"", ActionCreate}:                  {"draft", []string{EventCreated}},
		{"", ActionCreateSubmitted}:         {"pending_approval", []string{EventCreated}},
		{"draft", ActionEdit}:               {"draft", upd},
		{"pending_approval", ActionEdit}:    {"pending_approval", upd},
		{"draft", ActionSubmit}:             {"pending_approval", upd},
		{"pending_approval", ActionApprove}: {"approved", upd},
		{"approved", ActionSign}:            {"signed", []string{EventUpdated, EventSigned}},
		{"signed", ActionActivate}:          {"active", []string{EventUpdated, EventActive}},
		{"draft", ActionVoid}:               {"void", upd},
		{"pending_approval", ActionVoid}:    {"void", upd},
		{"approved", ActionVoid}:            {"void", upd},
	}
	pairs := 0
	for _, from := range Statuses {
		for _, action := range Actions {
			pairs++
			name := from + "/" + action
			if from == "" {
				name = "new/" + action
			}
			t.Run(name, func(t *testing.T) {
				to, events, err := Transition(from, action)
				w, ok := allowed[[2]string{from, action}]
				if ok {
					if err != nil || to != w.to || !reflect.DeepEqual(events, w.events) {
						t.Fatalf("got (%q, %v, %v), want (%q, %v)", to, events, err, w.to, w.events)
					}
					return
				}
				var ce *apperr.ConflictError
				if !errors.Is(err, apperr.ErrInvalidTransition) || !errors.As(err, &ce) || ce.Code != "invalid_state_transition" {
					t.Fatalf("got (%q, %v, %v), want an invalid_state_transition conflict", to, events, err)
				}
				if !strings.Contains(ce.Message, "status is "+from+".") {
					t.Errorf("message %q does not name the current status %q", ce.Message, from)
				}
				if to != from || events != nil {
					t.Errorf("a refused move changed something: (%q, %v)", to, events)
				}
			})
		}
	}
	if pairs != 7*8 {
		t.Fatalf("covered %d pairs, want 56", pairs)
	}
}

// TestCreatedAndSignedOncePerDeal walks every sequence of actions the machine accepts
// (it has no cycles except edits, which emit deal-updated only) and counts the events.
func TestCreatedAndSignedOncePerDeal(t *testing.T) {
	paths := 0
	var walk func(status string, depth int, counts map[string]int)
	walk = func(status string, depth int, counts map[string]int) {
		if counts[EventCreated] > 1 || counts[EventSigned] > 1 || counts[EventActive] > 1 {
			t.Fatalf("an event was sent twice: %v", counts)
		}
		if depth == 8 {
			return
		}
		for _, action := range Actions {
			to, events, err := Transition(status, action)
			if err != nil {
				continue
			}
			paths++
			next := map[string]int{}
			for k, v := range counts {
				next[k] = v
			}
			for _, e := range events {
				next[e]++
			}
			walk(to, depth+1, next)
		}
	}
	walk("", 0, map[string]int{})
	if paths < 10 {
		t.Fatalf("walked only %d moves", paths)
	}
}

// TestTransitionReturnsACopy: callers may append to the events without changing the table.
func TestTransitionReturnsACopy(t *testing.T) {
	_, ev, _ := Transition("approved", ActionSign)
	ev[0] = "x"
	if _, again, _ := Transition("approved", ActionSign); again[0] != EventUpdated {
		t.Fatal("Transition shares its table's slice")
	}
}
