package envgate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
)

// TestGate: with n 2, environment A's third call waits and is refused 429 rate_limited
// with a Retry-After, naming what it counts, while B's call is admitted; a slot given back
// admits A's next; a waiting call whose context ends leaves; nothing is left behind.
func TestGate(t *testing.T) {
	defer func(w time.Duration) { Wait = w }(Wait)
	Wait = 20 * time.Millisecond
	var g Gate
	ctx := context.Background()
	var leaves []func()
	for range 2 {
		leave, err := g.Enter(ctx, "A", 2, "filter tests")
		if err != nil {
			t.Fatal(err)
		}
		leaves = append(leaves, leave)
	}
	_, err := g.Enter(ctx, "A", 2, "filter tests")
	var busy *apperr.BusyError
	if !errors.As(err, &busy) || busy.Code != apperr.CodeRateLimited || busy.RetryAfter <= 0 ||
		!strings.Contains(busy.Message, "2 filter tests") {
		t.Fatalf("A's third call: %v; want 429 rate_limited with a Retry-After, naming 2 filter tests", err)
	}
	leaveB, err := g.Enter(ctx, "B", 2, "filter tests")
	if err != nil {
		t.Fatalf("B's call while A's two run: %v", err)
	}
	leaveB()

	// A waiting call is admitted as soon as a slot is given back.
	Wait = time.Minute
	admitted := make(chan func())
	go func() {
		leave, err := g.Enter(ctx, "A", 2, "filter tests")
		if err != nil {
			t.Error(err)
		}
		admitted <- leave
	}()
	leaves[0]()
	leaves[0] = <-admitted

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.Enter(cctx, "A", 2, "filter tests"); !errors.Is(err, context.Canceled) {
		t.Fatalf("A's call with an ended context: %v", err)
	}
	for _, leave := range leaves {
		leave()
	}
	if n := g.environments(); n != 0 {
		t.Fatalf("%d environments' slots left after every call ended", n)
	}
	if leave, err := g.Enter(ctx, "A", 0, "filter tests"); err != nil {
		t.Fatalf("n 0 admits every call: %v", err)
	} else {
		leave()
	}
}
