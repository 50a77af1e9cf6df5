package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// paces collects what committed transactions hand over of endpoints' paces.
type paces struct {
	mu  sync.Mutex
	got []store.Pace
}

func (p *paces) Committed(_ context.Context, c store.Committed) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, c.Paces...)
}

func (p *paces) take() []store.Pace {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.got
	p.got = nil
	return out
}

func rateLimit(s string) *json.RawMessage {
	raw := json.RawMessage(s)
	return &raw
}

// createPaced creates an endpoint paced as rl says (a JSON rate_limit).
func createPaced(ctx context.Context, e *webhook.Endpoints, env models.Env, rl string) (models.WebhookEndpoint, error) {
	u := "https://127.0.0.1:9/hook"
	return e.Create(ctx, env, webhook.EndpointFields{URL: &u, RateLimit: rateLimit(rl)}, idempotency.Reply[webhook.EndpointObject]{})
}

func codeOf(err error) string {
	var inv *apperr.InvalidError
	if errors.As(err, &inv) {
		return inv.Code + " " + inv.Param + ": " + inv.Message
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// TestPacedRateCapPerEnvironment (CONTRACT §27): the rates of an environment's paced
// endpoints add up to at most its cap; past it, 400 rate_limit_too_high naming the room
// left. Unpacing frees the room; lowering a rate is never refused; per-minute rates
// count in per-second units. Each change of rate is handed over after its commit.
func TestPacedRateCapPerEnvironment(t *testing.T) {
	testdb.ForBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		got := &paces{}
		db.Store.SetAfterCommit(got)
		e := &webhook.Endpoints{Store: db.Store, AllowPrivate: true, Pace: webhook.PaceLimits{PerEnvironment: 10}}
		a, err := createPaced(ctx, e, db.Env, `{"limit":6,"period":"1s"}`)
		if err != nil {
			t.Fatal(err)
		}
		if p := got.take(); len(p) != 1 || p[0] != (store.Pace{EndpointID: a.ID, Rate: 6}) {
			t.Fatalf("handed over %+v", p)
		}
		_, err = createPaced(ctx, e, db.Env, `{"limit":5,"period":"1s"}`)
		if c := codeOf(err); !strings.HasPrefix(c, "rate_limit_too_high rate_limit:") || !strings.Contains(c, "leaves 4 per second (240 per minute)") {
			t.Fatalf("5/s past a room of 4: %s", c)
		}
		b, err := createPaced(ctx, e, db.Env, `{"limit":240,"period":"1m"}`) // 4/s: exactly the room
		if err != nil {
			t.Fatal(codeOf(err))
		}
		// An unpaced endpoint takes nothing of the cap.
		if _, err := createPaced(ctx, e, db.Env, `null`); err != nil {
			t.Fatal(codeOf(err))
		}
		got.take()
		if _, err := e.Update(ctx, db.Env, a.ID, webhook.EndpointFields{RateLimit: rateLimit(`{"limit":7,"period":"1s"}`)}, idempotency.Reply[webhook.EndpointObject]{}); codeOf(err) == "" || !strings.HasPrefix(codeOf(err), "rate_limit_too_high") {
			t.Fatalf("raising a past the cap: %s", codeOf(err))
		}
		if ep, _ := db.Store.WebhookEndpointByID(ctx, db.Env, a.ID); ep.RateLimit != 6 {
			t.Fatalf("a refused raise changed the endpoint: %d/%s", ep.RateLimit, ep.RatePeriod)
		}
		if _, err := e.Update(ctx, db.Env, a.ID, webhook.EndpointFields{RateLimit: rateLimit(`{"limit":2,"period":"1s"}`)}, idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatalf("lowering a rate: %s", codeOf(err))
		}
		ep, err := e.Update(ctx, db.Env, b.ID, webhook.EndpointFields{RateLimit: rateLimit(`null`)}, idempotency.Reply[webhook.EndpointObject]{})
		if err != nil || ep.RateLimit != 0 || ep.RatePeriod != "" || webhook.ToEndpointObject(ep).RateLimit != nil {
			t.Fatalf("unpacing: %+v %s", webhook.ToEndpointObject(ep).RateLimit, codeOf(err))
		}
		if p := got.take(); len(p) != 2 || p[0] != (store.Pace{EndpointID: a.ID, Rate: 2}) || p[1] != (store.Pace{EndpointID: b.ID, Rate: 0}) {
			t.Fatalf("handed over %+v", p)
		}
		if _, err := createPaced(ctx, e, db.Env, `{"limit":8,"period":"1s"}`); err != nil {
			t.Fatalf("8/s in the room unpacing left: %s", codeOf(err))
		}
		// A PATCH that leaves the rate alone hands nothing over.
		d := "renamed"
		if _, err := e.Update(ctx, db.Env, a.ID, webhook.EndpointFields{Description: &d}, idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}
		got.take()
		if _, err := webhook.DeleteEndpoint(ctx, db.Store, db.Env, a.ID, idempotency.Reply[webhook.DeletedEndpoint]{}); err != nil {
			t.Fatal(err)
		}
		if p := got.take(); len(p) != 1 || p[0] != (store.Pace{EndpointID: a.ID, Rate: 0}) {
			t.Fatalf("deleting a paced endpoint handed over %+v", p)
		}
	})
}

// TestPacedRateCapUnderConcurrentWrites: two writes that each fit the room but not
// together cannot both pass: the cap is decided under the environment's lock.
func TestPacedRateCapUnderConcurrentWrites(t *testing.T) {
	testdb.ForBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		e := &webhook.Endpoints{Store: db.Store, AllowPrivate: true, Pace: webhook.PaceLimits{PerEnvironment: 10}}
		ids := make([]string, 4)
		for i := range ids {
			ep, err := createPaced(ctx, e, db.Env, `null`)
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = ep.ID
		}
		for round := 0; round < 5; round++ {
			var wg sync.WaitGroup
			errs := make([]error, len(ids))
			for i, id := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = e.Update(ctx, db.Env, id, webhook.EndpointFields{RateLimit: rateLimit(`{"limit":6,"period":"1s"}`)}, idempotency.Reply[webhook.EndpointObject]{})
				}()
			}
			wg.Wait()
			passed := 0
			for _, err := range errs {
				switch {
				case err == nil:
					passed++
				case !errors.Is(err, webhook.ErrRateLimitTooHigh) && !strings.Contains(codeOf(err), "lock"):
					t.Fatalf("round %d: %s", round, codeOf(err))
				}
			}
			var total float64
			for _, id := range ids {
				ep, err := db.Store.WebhookEndpointByID(ctx, db.Env, id)
				if err != nil {
					t.Fatal(err)
				}
				total += ep.PacedRate()
			}
			if passed != 1 || total != 6 {
				t.Fatalf("round %d: %d of 4 writes of 6/s passed a cap of 10/s; the environment asks %v/s", round, passed, total)
			}
			for _, id := range ids {
				if _, err := e.Update(ctx, db.Env, id, webhook.EndpointFields{RateLimit: rateLimit(`null`)}, idempotency.Reply[webhook.EndpointObject]{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// TestPacedEndpointsCapOfTheDeployment: a new paced endpoint past REVOPS_PACED_ENDPOINTS
// (every environment's together) is refused, naming the setting; changing the rate of
// one already paced is not.
func TestPacedEndpointsCapOfTheDeployment(t *testing.T) {
	testdb.ForBoth(t, models.EnvSandbox, func(t *testing.T, ctx context.Context, db testdb.Seeded) {
		e := &webhook.Endpoints{Store: db.Store, AllowPrivate: true, Pace: webhook.PaceLimits{Endpoints: 2}}
		other := testdb.SeedOrg(t, db.Store, "Other", "o@example.com", models.EnvLive)
		a, err := createPaced(ctx, e, db.Env, `{"limit":1,"period":"1s"}`)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := createPaced(ctx, e, other, `{"limit":1,"period":"1m"}`); err != nil {
			t.Fatal(err)
		}
		_, err = createPaced(ctx, e, db.Env, `{"limit":1,"period":"1s"}`)
		if c := codeOf(err); !strings.HasPrefix(c, "too_many_paced_endpoints rate_limit:") || !strings.Contains(c, "REVOPS_PACED_ENDPOINTS") {
			t.Fatalf("a third paced endpoint past 2: %s", c)
		}
		if _, err := e.Update(ctx, db.Env, a.ID, webhook.EndpointFields{RateLimit: rateLimit(`{"limit":3,"period":"1s"}`)}, idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatalf("changing a paced endpoint's rate at the cap: %s", codeOf(err))
		}
		if _, err := createPaced(ctx, e, db.Env, `null`); err != nil {
			t.Fatalf("an unpaced endpoint at the cap: %s", codeOf(err))
		}
	})
}
