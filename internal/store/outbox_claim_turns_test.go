package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// CONTRACT §17 "Starts under bursts", on PostgreSQL (the only database that claims):
// with fewer environments waiting than a claim takes, each claim takes them all, in the
// round robin's order from the one after the last claim's first, round to the first
// ones, so that no environment is always the first whose starts are made; the events a
// claimer set aside (Held) are never taken, and an environment whose only waiting events
// are held is not taken at all (it takes no share).
func TestClaimStartsTurnsRoundAndLeavesHeld(t *testing.T) {
	ctx := context.Background()
	url := testdb.URL(t)
	st := testdb.Open(t, url)
	var envs []seeded
	for _, env := range twoOrgs(t, ctx, st, "Org %d", "o%d@example.com") {
		envs = append(envs, seeded{st: st, env: env, url: url})
	}
	slices.SortFunc(envs, func(a, b seeded) int { return strings.Compare(a.env.ID, b.env.ID) })
	events := map[string][]models.Event{} // by environment, oldest first
	for _, e := range envs {
		for range 3 {
			events[e.env.ID] = append(events[e.env.ID], newAccountEvent(t, e))
		}
	}
	none := func(context.Context, []models.Event) []store.Started { return nil }
	order := func(c store.StartClaim) []string {
		var out []string
		for _, e := range c.Events {
			if len(out) == 0 || out[len(out)-1] != e.EnvironmentID {
				out = append(out, e.EnvironmentID)
			}
		}
		return out
	}
	id := func(i int) string { return envs[i].env.ID }

	after := ""
	for turn := range len(envs) + 1 {
		c, err := st.ClaimStarts(ctx, store.StartQuery{After: after, Envs: 16, Limit: 64}, none)
		if err != nil {
			t.Fatal(err)
		}
		first := turn % len(envs)
		var want []string
		for i := range envs {
			want = append(want, id((first+i)%len(envs)))
		}
		if got := order(c); !slices.Equal(got, want) {
			t.Fatalf("claim %d after %q took the environments in the order %v, want %v", turn, after, got, want)
		}
		if len(c.Events) != 3*len(envs) || c.More {
			t.Fatalf("claim %d: %d events, more %v; want all %d and nothing more", turn, len(c.Events), c.More, 3*len(envs))
		}
		if c.Next != want[0] {
			t.Fatalf("claim %d: next after %q, want its first environment %q", turn, c.Next, want[0])
		}
		after = c.Next
	}

	// Held: environment 1's oldest event, and every event of environment 2.
	held := []string{events[id(1)][0].ID}
	for _, e := range events[id(2)] {
		held = append(held, e.ID)
	}
	c, err := st.ClaimStarts(ctx, store.StartQuery{Envs: 16, Limit: 64, Held: held}, none)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := order(c), []string{id(0), id(1), id(3)}; !slices.Equal(got, want) {
		t.Fatalf("with held events the claim took %v, want %v", got, want)
	}
	for _, e := range c.Events {
		if slices.Contains(held, e.ID) {
			t.Fatalf("the claim took the held event %s", e.ID)
		}
	}
	// Three environments share a claim of 6: two each, environment 1's two not held.
	c, err = st.ClaimStarts(ctx, store.StartQuery{Envs: 16, Limit: 6, Held: held}, none)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{events[id(0)][0].ID, events[id(0)][1].ID, events[id(1)][1].ID, events[id(1)][2].ID, events[id(3)][0].ID, events[id(3)][1].ID}
	if got := ids(c.Events); !slices.Equal(got, want) || !c.More {
		t.Fatalf("claim of 6: %v (more %v), want %v and more", got, c.More, want)
	}
}

// twoOrgs creates two organizations, named and signed up as the formats say with 0 and
// 1, and returns their environments: the first's sandbox and live, then the second's.
func twoOrgs(tb testing.TB, ctx context.Context, st *store.Store, name, email string) []store.Env {
	tb.Helper()
	var envs []store.Env
	for i := range 2 {
		org, err := orgs.CreateWithHash(ctx, st, fmt.Sprintf(name, i), fmt.Sprintf(email, i), "x")
		if err != nil {
			tb.Fatal(err)
		}
		for _, envName := range []string{models.EnvSandbox, models.EnvLive} {
			env, err := st.Environment(ctx, org.ID, envName)
			if err != nil {
				tb.Fatal(err)
			}
			envs = append(envs, env)
		}
	}
	return envs
}
