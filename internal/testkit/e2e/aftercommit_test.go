package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// Issue 42: every event, whoever emits it, starts the same way and as soon — right after
// the transaction that wrote it commits, through the process's one dispatcher. The
// events that a disabled endpoint, a health transition (endpoint-failing,
// delivery-exhausted, endpoint-recovered) and a meter alert emit are written by the
// worker's own transactions (a delivery's record and its settling, the meters'
// consumer), which before this issue nobody started but the claimer's poll or the
// sweeper. Here both are set to an hour, on PostgreSQL (the claimer) and on SQLite (the
// start queue): each event reaches its receiver all the same.
func TestEveryTransactionsEventsStartAfterItsCommit(t *testing.T) {
	for _, name := range []string{"postgres", "sqlite"} {
		t.Run(name, func(t *testing.T) {
			url := filepath.Join(t.TempDir(), "revops.db")
			if name == "postgres" {
				url = testdb.URL(t)
			}
			st := testdb.Open(t, url)
			env := testdb.Seed(t, st, models.EnvSandbox)
			eventsStartAfterCommit(t, st, env)
		})
	}
}

func eventsStartAfterCommit(t *testing.T, st *store.Store, env models.Env) {
	ctx := context.Background()
	ops, target := webhooktest.NewReceiver(t), webhooktest.NewReceiver(t)
	target.SetRespond(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	// ops hears every operational type; target takes deal-updated, with one attempt per
	// delivery, so that its first failure exhausts its delivery.
	newAfterCommitEndpoint(t, st, env, ops.URL+"/ops", []string{catalog.EndpointDisabled, catalog.EndpointFailing,
		catalog.EndpointRecovered, catalog.DeliveryExhausted, catalog.MeterThresholdCrossed}, models.DefaultRetryPolicy)
	once := models.DefaultRetryPolicy
	once.MaximumAttempts = 1
	tgt := newAfterCommitEndpoint(t, st, env, target.URL+"/hooks", []string{"deal-updated"}, once)
	key := secretKey(t, st, env.OrganizationID, env.Name)
	base, _ := startDev(t, st, app.Parts{SweepEvery: time.Hour, ClaimEvery: time.Hour},
		"--webhook-ca-file", webhooktest.CAFile(t), "--webhook-allow-private",
		"--webhook-failing-after", "1ns", "--webhook-disable-after", "1ns")

	// A change's event fails at target: the record of its one attempt turns the endpoint
	// failing and exhausts the delivery, the run's settling disables the endpoint.
	emitDealUpdated(t, st, env)
	for _, typ := range []string{catalog.EndpointFailing, catalog.DeliveryExhausted, catalog.EndpointDisabled} {
		waitDelivered(t, st, env, ops, typ)
	}
	// Enabled again and answering: its next success announces its recovery.
	target.SetRespond(nil)
	on := true
	if _, err := webhook.UpdateEndpoint(ctx, st, env, tgt.ID, webhook.EndpointPatch{Enabled: &on}, time.Now().UTC(),
		idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	emitDealUpdated(t, st, env)
	waitDelivered(t, st, env, ops, catalog.EndpointRecovered)

	// A meter alert fires in the consumer's transaction.
	if r := call(t, "POST", base+"/v1/meters", key.Plain, `{"key":"calls","filter":{"metric_name":"calls"},"aggregation":"sum"}`); r.status != http.StatusCreated {
		t.Fatalf("create meter: %d %s", r.status, r.body)
	}
	waitFor(t, 2*time.Minute, "meter ready (its backfill started after commit)", func() bool {
		r := call(t, "GET", base+"/v1/meters/calls", key.Plain, "")
		return r.status == http.StatusOK && r.json(t)["status"] == models.MeterReady
	})
	if r := call(t, "POST", base+"/v1/meters/calls/alerts", key.Plain, `{"threshold":5,"window":"day"}`); r.status != http.StatusCreated {
		t.Fatalf("create alert: %d %s", r.status, r.body)
	}
	usage := fmt.Sprintf(`{"transaction_id":"%s","mode":"increment","event_metrics":[{"account_id":"acct","product":"api",`+
		`"metric_name":"calls","metric_value":10,"metric_resolution":"day"}]}`, uuid.NewString())
	if r := call(t, "POST", base+"/v1/usage/events", key.Plain, usage); r.status != http.StatusCreated {
		t.Fatalf("usage: %d %s", r.status, r.body)
	}
	waitDelivered(t, st, env, ops, catalog.MeterThresholdCrossed)
}

// newAfterCommitEndpoint creates an enabled endpoint at url taking types under policy.
func newAfterCommitEndpoint(t *testing.T, st *store.Store, env models.Env, url string, types []string, policy models.RetryPolicy) models.WebhookEndpoint {
	t.Helper()
	ep, err := webhook.CreateEndpoint(context.Background(), st, env, models.WebhookEndpoint{URL: url, Method: "POST", Enabled: true,
		EventTypes: types, RetryPolicy: policy, Secret: "whsec_" + uuid.NewString()}, time.Now(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// emitDealUpdated commits a change that emits one deal-updated event, outside any
// request.
func emitDealUpdated(t *testing.T, st *store.Store, env models.Env) {
	t.Helper()
	id := uuid.NewString()
	if _, err := st.InTx(context.Background(), env, func(tx *store.Tx) error {
		tx.Emit(store.Emit{Type: "deal-updated", ObjectType: "deal", ObjectID: id, Object: map[string]string{"id": id}})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// waitDelivered waits until rc has received an event of type typ and its row is marked
// started: the claimer's poll and the sweeper are an hour away, so the start after its
// commit did both.
func waitDelivered(t *testing.T, st *store.Store, env models.Env, rc *webhooktest.Receiver, typ string) {
	t.Helper()
	var id string
	waitFor(t, 2*time.Minute, typ+" delivered", func() bool {
		for _, r := range rc.Received() {
			var body struct{ Event struct{ ID, Type string } }
			if json.Unmarshal(r.Body, &body) == nil && body.Event.Type == typ {
				id = body.Event.ID
				return true
			}
		}
		return false
	})
	// The start's mark may land after the delivery (a claim commits its marks once its
	// eager starts return): wait for it, with nothing else to make it for an hour.
	var ev models.Event
	waitFor(t, time.Minute, typ+" marked started", func() bool {
		var err error
		ev, _, err = st.EventByID(context.Background(), id)
		return err == nil && ev.DispatchedAt != nil
	})
	if ev.EnvironmentID != env.ID {
		t.Fatalf("%s event %s is of environment %s, want %s", typ, id, ev.EnvironmentID, env.ID)
	}
}
