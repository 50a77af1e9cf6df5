package activities_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/models"
)

// Custom headers (CONTRACT §25) go with every attempt of a delivery, as the endpoint
// holds them when the attempt runs (the activity reads them from the database: the
// input names ids only), and none of their values reaches the activity's logs, its
// error, the attempt records or the input; a loopback receiver echoing them leaves no
// excerpt.
func TestEveryAttemptCarriesTheEndpointsHeaders(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const first, second = "key-FIRST-5555", "key-SECOND-6666"
	ep, err := webhook.CreateEndpoint(ctx, f.db.Store, f.db.Env, models.WebhookEndpoint{
		URL: f.rc.URL + "/hooks", Method: http.MethodPost, Enabled: true, Secret: f.secret,
		Headers: map[string]string{"X-Api-Key": first},
	}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		t.Fatal(err)
	}
	ev, in, suite, logs := f.loggedDelivery(t)
	var failing atomic.Bool
	failing.Store(true)
	f.rc.SetRespond(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
		_, _ = io.WriteString(w, webhooktest.AckSentence+" you sent "+r.Header.Get("X-Api-Key"))
	})

	attempt := func() error {
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivity(f.acts)
		_, err := env.ExecuteActivity(f.acts.DeliverWebhook, in)
		return err
	}
	var errs []string
	if err := attempt(); err == nil {
		t.Fatal("the first attempt (500) succeeded")
	} else {
		errs = append(errs, err.Error())
	}
	// The endpoint's header changes between attempts: the next one sends the new value.
	change := webhook.HeaderChanges{Set: map[string]string{"x-api-key": second}}
	if _, err := webhook.UpdateEndpoint(ctx, f.db.Store, f.db.Env, ep.ID, webhook.EndpointPatch{Headers: &change}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	failing.Store(false)
	if err := attempt(); err != nil {
		t.Fatalf("second attempt: %v", err)
	}

	got := f.rc.Received()
	if len(got) != 2 || got[0].Header.Get("X-Api-Key") != first || got[1].Header.Get("X-Api-Key") != second {
		t.Fatalf("receiver got %d requests, headers %v", len(got), got)
	}
	as := f.attempts(t, ev)
	if len(as) != 2 {
		t.Fatalf("%d attempts recorded", len(as))
	}
	records, _ := json.Marshal(as)
	input, _ := json.Marshal(in)
	for what, text := range map[string]string{"logs": logs.String(), "errors": strings.Join(errs, "\n"),
		"attempt records": string(records), "input": string(input)} {
		for _, v := range []string{first, second, "FIRST", "SECOND"} {
			if strings.Contains(text, v) {
				t.Errorf("the %s hold %q: %s", what, v, text)
			}
		}
	}
	for _, a := range as {
		if a.ResponseExcerpt != "" {
			t.Errorf("attempt %d keeps excerpt %q from a loopback receiver", a.Number, a.ResponseExcerpt)
		}
	}
	if !strings.Contains(logs.String(), "webhook attempt") {
		t.Fatal("no attempt logged: the search of the logs proves nothing")
	}
}
