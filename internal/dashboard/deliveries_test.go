package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/dashboard"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// createAccount makes an account through the API, which writes an account-created event.
func (s *site) createAccount(key, name string) models.Event {
	s.t.Helper()
	b, _ := json.Marshal(map[string]any{"name": name})
	req, _ := http.NewRequest("POST", s.srv.URL+"/v1/accounts", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	var acct struct{ ID string }
	_ = json.NewDecoder(res.Body).Decode(&acct)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		s.t.Fatalf("create account: %d", res.StatusCode)
	}
	pr, err := s.keys.Authenticate(context.Background(), key)
	if err != nil {
		s.t.Fatal(err)
	}
	events, err := s.store.EventsForObject(context.Background(), pr.Env, acct.ID)
	if err != nil || len(events) == 0 {
		s.t.Fatalf("events of the new account: %v %d", err, len(events))
	}
	return events[0]
}

// fail records failed attempts of an event and leaves it retrying, as the worker would.
func (s *site) failAttempts(e models.Event, n int) {
	s.t.Helper()
	ctx := context.Background()
	env := store.EnvOf(e)
	start := time.Now().UTC().Add(-time.Duration(n) * time.Minute)
	for i := 1; i <= n; i++ {
		a := models.DeliveryAttempt{EventID: e.ID, RunID: "run-1", Number: i, Trigger: models.TriggerScheduled,
			URL: "https://hooks.example/x", Method: "POST", StartedAt: start.Add(time.Duration(i) * time.Minute),
			DurationMS: 120, StatusCode: 500, ResponseExcerpt: "upstream exploded", Error: "status 500", Outcome: models.AttemptFailed}
		if err := s.store.RecordAttempt(ctx, env, &a); err != nil {
			s.t.Fatal(err)
		}
	}
	if err := s.store.MarkDispatched(ctx, env, e.ID, "webhook-"+e.ID, "run-1", time.Now().UTC()); err != nil {
		s.t.Fatal(err)
	}
	if err := s.store.SetEventStatus(ctx, env, e.ID, models.EventRetrying); err != nil {
		s.t.Fatal(err)
	}
}

func TestDeliveriesListAndDetail(t *testing.T) {
	s := newSite(t, "--temporal-ui-url", "http://ui.test:8233", "--temporal-namespace", "prod")
	u := s.newUser("Acme", "owner@acme.test")
	key, err := s.keys.Create(context.Background(), u.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	e := s.createAccount(key.Plain, "Globex")
	s.failAttempts(e, 2)
	c := s.client()
	c.mustLogin(u)

	list := c.get("/dashboard/deliveries")
	for _, want := range []string{e.ID, "account-created", "state-retrying", "<td>2</td>", "≈ "} {
		if !strings.Contains(list.body, want) {
			t.Fatalf("list misses %q: %.3000s", want, list.body)
		}
	}
	if strings.Contains(list.body, `id="replay-failed"`) {
		t.Error("replay button shown without a replayer")
	}
	if f := c.get("/dashboard/deliveries?status=delivered"); strings.Contains(f.body, e.ID) {
		t.Error("status filter ignored")
	}
	detail := c.get("/dashboard/deliveries/" + e.ID)
	wantLink := "http://ui.test:8233/namespaces/prod/workflows/webhook-" + e.ID + "/run-1/history"
	for _, want := range []string{wantLink, "upstream exploded", "status 500", "scheduled", `&#34;type&#34;: &#34;account-created&#34;`} {
		if !strings.Contains(detail.body, want) {
			t.Fatalf("detail misses %q: %.4000s", want, detail.body)
		}
	}

	// Another organization, and the other environment, do not see the event.
	other := s.client()
	other.mustLogin(s.newUser("Bravo", "owner@bravo.test"))
	if p := other.get("/dashboard/deliveries/" + e.ID); p.status != http.StatusNotFound {
		t.Fatalf("other organization: %d", p.status)
	}
	if p := other.get("/dashboard/deliveries"); strings.Contains(p.body, e.ID) {
		t.Fatal("other organization lists the event")
	}
	tok := c.csrf("/dashboard/deliveries")
	c.post("/dashboard/environment", url.Values{"csrf_token": {tok}, "environment": {"live"}})
	if p := c.get("/dashboard/deliveries/" + e.ID); p.status != http.StatusNotFound {
		t.Fatalf("live environment: %d", p.status)
	}
}

// fakeReplayer stands in for the webhook engine's replay (which needs Temporal) to test
// the buttons. With a store it also does to the database what a real replay does
// (dispatch.Starter.Replay: MarkReplayed, so the event goes back to pending with a new
// run), and ReplayFailed replays the environment's failed events, as the replay job does.
type fakeReplayer struct {
	mu      sync.Mutex
	one     []string
	failed  int
	running map[string]bool
	store   *store.Store
}

func (f *fakeReplayer) Replay(ctx context.Context, env store.Env, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running[id] {
		return apperr.Conflict("delivery_in_progress", "a delivery of event %s is running", id)
	}
	f.running[id] = true
	f.one = append(f.one, id)
	if f.store == nil {
		return nil
	}
	runID := fmt.Sprintf("replay-%d", len(f.one))
	return f.store.MarkReplayed(ctx, env, id, "webhook-"+id, runID, time.Now().UTC())
}

func (f *fakeReplayer) ReplayFailed(ctx context.Context, env store.Env) (int, error) {
	f.mu.Lock()
	f.failed++
	f.mu.Unlock()
	if f.store == nil {
		return 3, nil
	}
	events, _, err := f.store.DashboardEvents(ctx, env, models.EventFailed, store.Page{Limit: 100})
	if err != nil {
		return 0, err
	}
	for _, e := range events {
		// Like the job, an event that cannot be replayed counts as matched all the same.
		_ = f.Replay(ctx, env, e.ID)
	}
	return len(events), nil
}

// dashboardWith serves the dashboard alone with rp as its replayer: the API's own one
// needs a Temporal server, which the dashboard's tests do not run.
func (s *site) dashboardWith(rp dashboard.Replayer) string {
	r := gin.New()
	dashboard.Routes(r, dashboard.Deps{Config: s.cfg, Store: s.store, Keys: s.keys, Replay: rp})
	srv := httptest.NewServer(r)
	s.t.Cleanup(srv.Close)
	return srv.URL
}

func TestReplayButtons(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	key, _ := s.keys.Create(context.Background(), u.orgID, "sandbox", "secret")
	e := s.createAccount(key.Plain, "Globex")
	rp := &fakeReplayer{running: map[string]bool{}}
	c := s.client()
	c.base = s.dashboardWith(rp)
	c.mustLogin(u)

	detail := c.get("/dashboard/deliveries/" + e.ID)
	if !strings.Contains(detail.body, `id="replay-event"`) {
		t.Fatal("no replay button")
	}
	tok := csrfField.FindStringSubmatch(detail.body)[1]
	for _, tc := range []struct {
		name   string
		path   string
		form   url.Values
		status int
	}{
		{"without csrf", "/dashboard/deliveries/" + e.ID + "/replay", url.Values{}, http.StatusForbidden},
		{"replay", "/dashboard/deliveries/" + e.ID + "/replay", url.Values{"csrf_token": {tok}}, http.StatusSeeOther},
		{"while running", "/dashboard/deliveries/" + e.ID + "/replay", url.Values{"csrf_token": {tok}}, http.StatusConflict},
		{"unknown event", "/dashboard/deliveries/nope/replay", url.Values{"csrf_token": {tok}}, http.StatusNotFound},
		{"all failed", "/dashboard/deliveries/replay-failed", url.Values{"csrf_token": {tok}}, http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if p := c.post(tc.path, tc.form); p.status != tc.status {
				t.Fatalf("%d, want %d: %.300s", p.status, tc.status, p.body)
			}
		})
	}
	if len(rp.one) != 1 || rp.one[0] != e.ID || rp.failed != 1 {
		t.Fatalf("replayer calls: %v, failed %d", rp.one, rp.failed)
	}
	if p := c.get("/dashboard/deliveries?replayed=3"); !strings.Contains(p.body, "Replay started for 3 failed") {
		t.Fatal("no replay notice")
	}
}
