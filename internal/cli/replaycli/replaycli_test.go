package replaycli_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/activities"
	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/replaycli"
	"github.com/revops/revops/internal/dispatch"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/apitest"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// replayer records the replayed events handed to the dispatcher, in place of Temporal
// (internal/testkit/e2e runs the command against the real one).
type replayer struct {
	mu  sync.Mutex
	ids []string
}

func (r *replayer) Dispatch(_ context.Context, evs []models.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range evs {
		if e.RedispatchAt != nil { // not the changes' new events
			r.ids = append(r.ids, e.ID)
		}
	}
}

// pagedJobs runs a job as its BulkReplay workflow does — the real page activity, page
// after page from the cursor it returns — without Temporal, whose part the e2e tests
// cover: the CLI only reads the job's row.
type pagedJobs struct {
	bulk *activities.BulkReplay
}

func (p *pagedJobs) StartDetached(_ context.Context, j store.Job) {
	go func() {
		in := activities.ReplayPageInput{JobID: j.ID, Limit: 2}
		for {
			out, err := p.bulk.ReplayPage(context.Background(), in)
			if err != nil || out.Done {
				return
			}
			in.CursorID = out.CursorID
		}
	}()
}

type fixture struct {
	url, key string
	rp       *replayer
	q        *dispatch.Queue
	failed   []string // failed account-created events
	other    string   // an account-updated event, failed too
	ok       string   // a delivered event
	endpoint string   // the one endpoint
}

// newFixture: a real API over a fresh database; three accounts created, the first
// renamed; two creations and the rename failed.
func newFixture(t *testing.T) *fixture {
	st := testdb.New(t)
	deps := apitest.Deps(apitest.Config(t), st)
	km := deps.Keys
	ctx := context.Background()
	org, _, err := orgs.Create(ctx, st, "Acme", "owner@acme.test")
	if err != nil {
		t.Fatal(err)
	}
	k, err := km.Create(ctx, org.ID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	rp := &replayer{}
	q := dispatch.NewQueue(rp, nil, nil)
	jobs := &pagedJobs{bulk: &activities.BulkReplay{Store: st}}
	st.SetAfterCommit(dispatch.AfterCommit{Events: q, Jobs: jobs})
	srv := apitest.Serve(t, deps)
	f := &fixture{url: srv.URL, key: k.Plain, rp: rp, q: q}
	c, err := revops.NewClient(revops.WithBaseURL(srv.URL), revops.WithAPIKey(k.Plain))
	if err != nil {
		t.Fatal(err)
	}
	env, err := st.Environment(ctx, org.ID, "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	ep, err := webhook.CreateEndpoint(ctx, st, env, models.WebhookEndpoint{URL: "https://hooks.example/x", Method: "POST", Enabled: true, Secret: "whsec_fixture"}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		t.Fatal(err)
	}
	f.endpoint = ep.ID
	var accounts []string
	for _, name := range []string{"A", "B", "C"} {
		var out map[string]any
		if err := c.Do(ctx, "POST", "/v1/accounts", map[string]any{"name": name}, &out); err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, out["id"].(string))
	}
	if err := c.Do(ctx, "PATCH", "/v1/accounts/"+accounts[0], map[string]any{"name": "A2"}, nil); err != nil {
		t.Fatal(err)
	}
	fail := func(id string) {
		if err := st.SetEventStatus(ctx, env, id, models.EventFailed); err != nil {
			t.Fatal(err)
		}
	}
	for i, a := range accounts {
		evs, err := st.EventsForObject(ctx, env, a)
		if err != nil {
			t.Fatal(err)
		}
		switch i {
		case 0:
			f.failed = append(f.failed, evs[0].ID)
			f.other = evs[1].ID
			fail(evs[0].ID)
			fail(evs[1].ID)
		case 1:
			f.failed = append(f.failed, evs[0].ID)
			fail(evs[0].ID)
		default:
			// Delivered: a pending one is still being delivered and refuses a replay.
			f.ok = evs[0].ID
			if err := st.SetEventStatus(ctx, env, f.ok, models.EventDelivered); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

// ids are the events handed to the dispatcher so far.
func (f *fixture) ids() []string {
	f.q.Idle()
	f.rp.mu.Lock()
	defer f.rp.mu.Unlock()
	return append([]string(nil), f.rp.ids...)
}

func (f *fixture) run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	var o, e bytes.Buffer
	args = append([]string{"--api", f.url, "--api-key", f.key, "--poll", "10ms"}, args...)
	err = replaycli.Run(context.Background(), args, &o, &e)
	return o.String(), e.String(), err
}

func TestUsageErrors(t *testing.T) {
	f := newFixture(t)
	for _, args := range [][]string{
		{},
		{"--failed", "some-id"},
		{"--env", "staging", "--failed"},
		{"--since", "24h", "some-id"},
		{"--failed", "--since", "-1h"},
		{"--no-such-flag"},
	} {
		if _, _, err := f.run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	if len(f.ids()) != 0 {
		t.Fatalf("a refused command replayed %v", f.ids())
	}
}

func TestReplayByID(t *testing.T) {
	f := newFixture(t)
	// Flags may follow the ids; an unknown id is reported, the others still replayed.
	out, errOut, err := f.run(t, f.failed[0], "00000000-0000-0000-0000-000000000000", "--env", "sandbox", f.ok)
	if err == nil || !strings.Contains(errOut, "00000000-0000-0000-0000-000000000000: 404 resource_missing") {
		t.Fatalf("err %v, stderr %q", err, errOut)
	}
	if !strings.Contains(out, "replayed 2 of 3 event(s)") || !strings.Contains(errOut, "[####################] 3/3") {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}
	if len(f.ids()) != 2 || f.ids()[0] != f.failed[0] || f.ids()[1] != f.ok {
		t.Errorf("replayed %v", f.ids())
	}
}

// --endpoint replays the deliveries to that endpoint only: the API refuses an id that
// is no endpoint of the environment, and takes the real one.
func TestReplayToOneEndpoint(t *testing.T) {
	f := newFixture(t)
	_, errOut, err := f.run(t, "--endpoint", "00000000-0000-4000-8000-000000000000", f.failed[0])
	if err == nil || !strings.Contains(errOut, "endpoint_id") {
		t.Fatalf("unknown endpoint: err %v, stderr %q", err, errOut)
	}
	if len(f.ids()) != 0 {
		t.Fatalf("a refused replay was dispatched: %v", f.ids())
	}
	if out, errOut, err := f.run(t, "--endpoint", f.endpoint, f.failed[0]); err != nil || !strings.Contains(out, "replayed 1 of 1") {
		t.Fatalf("replay to the endpoint: %v %q %q", err, out, errOut)
	}
	if got := f.ids(); len(got) != 1 || got[0] != f.failed[0] {
		t.Errorf("replayed %v", got)
	}
	// A dry run lists only the events with a failed delivery to that endpoint.
	for endpoint, want := range map[string]string{f.endpoint: "2 failed event(s)", "00000000-0000-4000-8000-000000000000": "0 failed event(s)"} {
		if out, _, err := f.run(t, "--failed", "--dry-run", "--endpoint", endpoint); err != nil || !strings.Contains(out, want) {
			t.Errorf("dry run to %s: %v %q, want %s", endpoint, err, out, want)
		}
	}
}

func TestFailedDryRunThenBulk(t *testing.T) {
	f := newFixture(t)
	out, _, err := f.run(t, "--failed", "--since", "1h", "--type", "account-created", "--dry-run")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range f.failed {
		if !strings.Contains(out, "would replay "+id) {
			t.Errorf("dry run does not list %s:\n%s", id, out)
		}
	}
	if strings.Contains(out, f.other) || strings.Contains(out, f.ok) || !strings.Contains(out, "2 failed event(s) would be replayed") {
		t.Errorf("dry run lists:\n%s", out)
	}
	if len(f.ids()) != 0 {
		t.Fatalf("dry run replayed %v", f.ids())
	}

	out, errOut, err := f.run(t, "--failed", "--since", "1h")
	if err != nil {
		t.Fatalf("bulk: %v (%s)", err, errOut)
	}
	if !strings.Contains(out, "matched 3, replayed 3, not replayed 0") || !strings.Contains(errOut, "] 3/3") {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}
	if len(f.ids()) != 3 {
		t.Errorf("replayed %v", f.ids())
	}
	// Nothing failed is left.
	if out, _, err := f.run(t, "--failed", "--dry-run"); err != nil || !strings.Contains(out, "0 failed event(s)") {
		t.Errorf("after the bulk replay: %q %v", out, err)
	}
}

// A bulk replay matches deliveries and replays each to its own endpoint: the failed
// deliveries of a deleted endpoint (a stopped `revops listen`'s) are not replayed, and
// the command says why and what reaches the endpoints subscribed now.
func TestBulkOfDeletedEndpointSaysWhy(t *testing.T) {
	f := newFixture(t)
	c, err := revops.NewClient(revops.WithBaseURL(f.url), revops.WithAPIKey(f.key))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Do(context.Background(), "DELETE", "/v1/webhook_endpoints/"+f.endpoint, nil, nil); err != nil {
		t.Fatal(err)
	}
	out, _, err := f.run(t, "--failed", "--since", "1h")
	if !strings.Contains(out, "replayed 0, not replayed 3") {
		t.Errorf("stdout %q", out)
	}
	if err == nil || !strings.Contains(err.Error(), "endpoint was deleted") || !strings.Contains(err.Error(), "revops webhooks replay ID") {
		t.Errorf("error %v: want the reasons (in progress, endpoint deleted) and the replay by id", err)
	}
	if len(f.ids()) != 0 {
		t.Errorf("replayed %v", f.ids())
	}
}
