package activities_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// Issue 41 finding 8 (CONTRACT §25): an endpoint URL's user information and query values
// are the receiver's secrets. An endpoint saved with both before such URLs were refused
// keeps delivering — the receiver gets them as they are — but the attempt records, their
// API form, the activity's logs and its error show "<redacted>" in their place.
func TestAttemptsMaskTheURLsSecrets(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const user, password, token = "ops-user-4242", "pw-9191", "tok-7373"
	raw := strings.Replace(f.rc.URL, "https://", "https://"+user+":"+password+"@", 1) + "/hooks?token=" + token + "&team=" + token
	if _, err := webhook.CreateEndpoint(ctx, f.db.Store, f.db.Env, models.WebhookEndpoint{
		URL: raw, Method: http.MethodPost, Enabled: true, Secret: f.secret,
	}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	var fail atomic.Bool
	f.rc.SetRespond(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
		_, _ = w.Write([]byte("Revops API Event Received."))
	})
	ev, in, suite, logs := f.loggedDelivery(t)
	var errs []string
	for _, failing := range []bool{true, false} {
		fail.Store(failing)
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(f.acts)
		if _, err := env.ExecuteActivity(f.acts.DeliverWebhook, in); err != nil {
			errs = append(errs, err.Error())
		}
	}
	got := f.rc.Received()
	if len(got) != 2 || !strings.Contains(got[1].Query, "token="+token) {
		t.Fatalf("receiver got %d requests (%+v): want the query as saved", len(got), got)
	}
	if a, want := got[1].Header.Get("Authorization"), "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+password)); a != want {
		t.Fatalf("receiver got Authorization %q: want the URL's credentials, as before", a)
	}
	as := f.attempts(t, ev)
	if len(as) != 2 || len(errs) != 1 {
		t.Fatalf("%d attempts recorded, errors %v", len(as), errs)
	}
	const want = "/hooks?token=<redacted>&team=<redacted>"
	for _, a := range as {
		if !strings.HasPrefix(a.URL, "https://<redacted>@") || !strings.HasSuffix(a.URL, want) {
			t.Errorf("attempt %d recorded url %q, want credentials and query values redacted", a.Number, a.URL)
		}
	}
	records, _ := json.Marshal(as)
	detail, err := events.Get(ctx, f.db.Store, f.db.Env, ev.ID)
	if err != nil {
		t.Fatal(err)
	}
	shown, _ := json.Marshal(events.ToObject(detail, events.Links{}))
	for what, text := range map[string]string{"logs": logs.String(), "errors": strings.Join(errs, "\n"),
		"attempt records": string(records), "the event's API object": string(shown)} {
		for _, v := range []string{user, password, token} {
			if strings.Contains(text, v) {
				t.Errorf("the %s hold %q: %s", what, v, text)
			}
		}
	}
	if !strings.Contains(logs.String(), "webhook attempt") || !strings.Contains(string(shown), `token=\u003credacted\u003e`) {
		t.Fatalf("no attempt logged or shown: the search proves nothing\n%s\n%s", logs, shown)
	}
}

// loggedDelivery is a deal-signed event with its one delivery, the input of its attempts
// (at most 3), and a test suite whose activities log into logs, for a search of them.
func (f *fixture) loggedDelivery(t *testing.T) (models.Event, activities.DeliverInput, *testsuite.WorkflowTestSuite, *strings.Builder) {
	t.Helper()
	ev := f.db.Event(t, "deal-signed", map[string]any{"id": "d1"}, time.Time{})
	ds, err := f.db.Store.EventDeliveries(context.Background(), f.db.Env, ev.ID)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries %v (%v)", ds, err)
	}
	logs := &strings.Builder{}
	suite := &testsuite.WorkflowTestSuite{}
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	return ev, activities.DeliverInput{EventID: ev.ID, DeliveryID: ds[0].ID, Trigger: models.TriggerScheduled, MaxAttempts: 3}, suite, logs
}
