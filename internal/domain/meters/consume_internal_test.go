package meters

import (
	"context"
	"testing"
	"time"
)

// CONTRACT §21: environments with a backlog take turns, round robin. With one heavy
// environment that always has more and light ones joining, a light one is taken after at
// most one turn of each environment ahead of it, and the heavy one goes to the back of
// the line after each of its turns.
func TestConsumerLineTakesTurns(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l := newLine(nil)
	l.join([]string{"heavy-a", "heavy-b"})
	var order []string
	turn := func(more func(env string) bool) {
		env, b, ok := l.next(ctx)
		if !ok {
			t.Fatal("no environment in the line")
		}
		order = append(order, env)
		l.done(env, b, true, more(env))
	}
	heavy := func(env string) bool { return env == "heavy-a" || env == "heavy-b" }
	turn(heavy)                          // heavy-a, then back in the line behind heavy-b
	l.join([]string{"light", "heavy-a"}) // light joins at the end; heavy-a is in the line already
	for range 5 {
		turn(heavy)
	}
	want := []string{"heavy-a", "heavy-b", "heavy-a", "light", "heavy-b", "heavy-a"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("turns %v, want %v", order, want)
		}
	}
	// A budget adapted to a slow turn is the environment's next.
	l.done("heavy-b", Budget{RowMeters: 1234, Bytes: 1}, true, false)
	if b := l.budgets["heavy-b"]; b.RowMeters != 1234 {
		t.Fatalf("budget kept %+v", b)
	}
}

// The budget halves after a turn over the turn time and grows after a shorter one,
// within its bounds.
func TestAdaptBudget(t *testing.T) {
	if got := adapt(Budget{RowMeters: maxRowMeters}, 2*turnTime); got.RowMeters != maxRowMeters/2 {
		t.Fatalf("after a slow turn: %d", got.RowMeters)
	}
	small := Budget{RowMeters: minRowMeters, Bytes: stepBytes}
	if got := adapt(small, 10*turnTime); got.RowMeters != minRowMeters {
		t.Fatalf("below the least budget: %d", got.RowMeters)
	}
	if got := adapt(Budget{RowMeters: 100}, 10*turnTime); got.RowMeters != 100 {
		t.Fatalf("a budget below the least one grew after a slow turn: %d", got.RowMeters)
	}
	if got := adapt(small, time.Millisecond); got.RowMeters <= minRowMeters {
		t.Fatalf("not grown after a quick turn: %d", got.RowMeters)
	}
	if got := adapt(Budget{RowMeters: maxRowMeters}, time.Millisecond); got.RowMeters != maxRowMeters {
		t.Fatalf("grown past the bound: %d", got.RowMeters)
	}
}

// CONTRACT §21: an environment whose turn panicked leaves the line for 1 s, then 2 s, …
// (its panics in a row), while the others keep their turns; a look at the database does
// not bring it back before its time, release does after it; a good turn ends the streak.
func TestConsumerLineSetsAsidePanickingEnvironment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	l := newLine(func() time.Time { return now })
	l.join([]string{"bad", "good"})
	take := func() string {
		env, _, ok := l.next(ctx)
		if !ok {
			t.Fatal("no environment in the line")
		}
		return env
	}
	onlyGood := func(why string) {
		t.Helper()
		for range 3 {
			if env := take(); env != "good" {
				t.Fatalf("%s: %s took a turn", why, env)
			}
			l.done("good", DefaultBudget, true, true)
		}
	}
	if env := take(); env != "bad" {
		t.Fatalf("first turn: %s", env)
	}
	for strikes, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		wait, n := l.setAside("bad", DefaultBudget)
		if wait != want || n != strikes+1 {
			t.Fatalf("panic %d: set aside %v (%d in a row), want %v", strikes+1, wait, n, want)
		}
		l.join([]string{"bad"}) // listed again by the database: still set aside
		l.release()
		onlyGood("before its time")
		now = now.Add(wait - time.Millisecond)
		l.release()
		onlyGood("a millisecond before its time")
		now = now.Add(time.Millisecond)
		l.release()
		for env := take(); env != "bad"; env = take() {
			l.done(env, DefaultBudget, true, true)
		}
	}
	l.done("bad", DefaultBudget, true, true) // a good turn: the next panic starts again at 1 s
	if env := take(); env != "good" {
		t.Fatalf("after bad's good turn: %s", env)
	}
	l.done("good", DefaultBudget, true, true)
	take()
	if wait, n := l.setAside("bad", DefaultBudget); wait != time.Second || n != 1 {
		t.Fatalf("after a good turn: set aside %v (%d in a row)", wait, n)
	}
}
