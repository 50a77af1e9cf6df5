package dispatch_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/platform/metrics/metricstest"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// CONTRACT §17, issue 41 finding 5: environment env-a holds an event whose start always
// fails, among events of env-a, env-b and env-c (fewer environments than a claim takes).
// Every other start of the claim goes on — env-a's too; the failed one stays owed and is
// set aside: claims leave it for 1 s, then 2 s after its next failure (the starter's
// clock), while the other environments' new events start at every drain; it is counted
// in revops_starts_set_aside_total. Each claim begins with another environment than the
// one before (the round robin moves on), not always with env-a.
func TestClaimerStartThatAlwaysFailsFailsOnlyItself(t *testing.T) {
	ctx := context.Background()
	rows := &claimRows{started: map[string]string{}}
	add := func(env string, n int) []string {
		rows.mu.Lock()
		defer rows.mu.Unlock()
		var ids []string
		for range n {
			id := fmt.Sprintf("ev-%04d", len(rows.events))
			rows.events = append(rows.events, models.Event{ID: id, EnvironmentID: env, OrganizationID: "org", Fanout: &models.Fanout{}})
			ids = append(ids, id)
		}
		return ids
	}
	bad := add("env-a", 1)[0]
	add("env-a", 3)
	add("env-b", 5)
	add("env-c", 5)
	tc := &runsClient{broken: map[string]bool{wire.WorkflowID(bad): true}}
	clk := newClock()
	starter := &dispatch.Starter{Client: tc}
	starter.SetClock(clk.Now)
	c := &dispatch.Claimer{Starter: starter, Store: rows}
	setAside := func() float64 { return metricstest.Scrape(t).Value(t, "revops_starts_set_aside_total") }
	counted := setAside()

	c.DrainForTest(ctx)
	if started, _ := rows.count(); started != 13 || tc.triesOf(bad) != 1 {
		t.Fatalf("first drain: %d of 13 others started, the bad one tried %d times", started, tc.triesOf(bad))
	}
	// Set aside: three drains, each with new events of env-b and env-c, start them and
	// never try the bad one.
	for i := range 3 {
		add("env-b", 2)
		add("env-c", 1)
		c.DrainForTest(ctx)
		if started, _ := rows.count(); started != 13+3*(i+1) || tc.triesOf(bad) != 1 {
			t.Fatalf("drain %d while set aside: %d started, the bad one tried %d times", i, started, tc.triesOf(bad))
		}
	}
	clk.Add(time.Second)
	c.DrainForTest(ctx)
	if tc.triesOf(bad) != 2 {
		t.Fatalf("past 1 s: the bad one tried %d times, want 2", tc.triesOf(bad))
	}
	clk.Add(time.Second) // 1 s of the 2 its second failure set it aside for
	add("env-c", 1)
	c.DrainForTest(ctx)
	if started, _ := rows.count(); started != 23 || tc.triesOf(bad) != 2 {
		t.Fatalf("1 s after its second failure: %d of 23 others started, the bad one tried %d times", started, tc.triesOf(bad))
	}
	if got := setAside() - counted; got != 2 {
		t.Fatalf("%v starts set aside, want 2", got)
	}
	// Mended: after its time it starts.
	tc.mu.Lock()
	delete(tc.broken, wire.WorkflowID(bad))
	tc.mu.Unlock()
	clk.Add(time.Second)
	c.DrainForTest(ctx)
	if started, _ := rows.count(); started != 24 {
		t.Fatalf("after its time, mended: %d of 24 started", started)
	}
	// The round robin moved on at every claim of fewer environments than a claim takes.
	rows.mu.Lock()
	firsts := slices.Clone(rows.firsts)
	rows.mu.Unlock()
	for i := 1; i < len(firsts); i++ {
		if firsts[i] == firsts[i-1] {
			t.Fatalf("claims %d and %d both began with %s (claims began with %v)", i-1, i, firsts[i], firsts)
		}
	}
}

// A claim whose every start fails (Temporal away) stops the drain: it starts nothing,
// claims once, and the next drain tries again.
func TestClaimerStopsWhenNoStartSucceeds(t *testing.T) {
	ctx := context.Background()
	rows := &claimRows{started: map[string]string{}}
	broken := map[string]bool{}
	for i := range 200 {
		id := fmt.Sprintf("ev-%04d", i)
		rows.events = append(rows.events, models.Event{ID: id, EnvironmentID: fmt.Sprintf("env-%02d", i%20), OrganizationID: "org", Fanout: &models.Fanout{}})
		broken[wire.WorkflowID(id)] = true
	}
	tc := &runsClient{broken: broken}
	c := &dispatch.Claimer{Starter: &dispatch.Starter{Client: tc}, Store: rows}
	c.DrainForTest(ctx)
	if started, claims := rows.count(); started != 0 || claims != 1 {
		t.Fatalf("Temporal away: %d started in %d claims, want none in one", started, claims)
	}
}

// More starts set aside than a claim is told to leave (store.MaxHeld): a claim that
// returns one of the others does not try it before its time either, and a claim that
// started nothing ends the drain (claiming again at once would find the same events).
func TestClaimerSkipsHeldStartsBeyondThoseNamed(t *testing.T) {
	ctx := context.Background()
	rows := &claimRows{started: map[string]string{}}
	broken := map[string]bool{}
	var bad []string
	for i := range 100 {
		id := fmt.Sprintf("ev-%04d", i)
		rows.events = append(rows.events, models.Event{ID: id, EnvironmentID: "env-a", OrganizationID: "org", Fanout: &models.Fanout{}})
		broken[wire.WorkflowID(id)] = true
		bad = append(bad, id)
	}
	tc := &runsClient{broken: broken}
	starter := &dispatch.Starter{Client: tc}
	starter.SetClock(newClock().Now)
	c := &dispatch.Claimer{Starter: starter, Store: rows}
	tries := func() (n int) {
		for _, id := range bad {
			n += tc.triesOf(id)
		}
		return n
	}
	for range 10 {
		c.DrainForTest(ctx)
	}
	if got := tries(); got != 100 {
		t.Fatalf("100 starts that always fail were tried %d times while set aside", got)
	}
	_, claims := rows.count()
	c.DrainForTest(ctx)
	if _, after := rows.count(); after != claims+1 {
		t.Fatalf("a drain made %d claims that started nothing, want 1", after-claims)
	}
}
