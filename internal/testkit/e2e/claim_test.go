package e2e

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// CONTRACT §22, "Who starts runs": an API process that runs no worker (`revops api` on
// PostgreSQL) starts no run. It commits the change, answers, and wakes the worker
// processes with an outbox notification sent after commit; the event waits in the outbox
// until a process that runs a worker claims it, starts its run (eagerly: its client is
// its worker's) and marks it dispatched with that run's id.
func TestWorkersStartWhatAnAPIProcessCommits(t *testing.T) {
	db := webhooktest.New(t)
	rc := webhooktest.NewReceiver(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	key := endpointAndKey(t, db, rc.URL+"/hooks")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	temporalAddr := devTemporal(t)
	cfg, err := config.Load(flag.NewFlagSet("api", flag.ContinueOnError), "api", []string{
		"--http-addr", "127.0.0.1:0", "--metrics-addr", "", "--rate-limit", "0", "--temporal-address", temporalAddr,
		"--webhook-ca-file", webhooktest.CAFile(t), "--webhook-allow-private", "--webhook-retry-interval", "1s",
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func(p app.Parts) func() {
		tc, err := client.Dial(app.TemporalOptions(cfg, quiet))
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- app.Run(runCtx, cfg, quiet, db.Store, tc, p) }()
		return func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("stopped with %v", err)
			}
			tc.Close()
		}
	}

	// A listener of the outbox channel, as a worker process is.
	listener, err := pgx.Connect(ctx, db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(context.Background())
	if _, err := listener.Exec(ctx, "LISTEN "+store.OutboxChannel); err != nil {
		t.Fatal(err)
	}

	ready := make(chan string, 1)
	stopAPI := run(app.Parts{API: true, Ready: ready})
	defer stopAPI()
	base := "http://" + <-ready
	r := call(t, "POST", base+"/v1/accounts", key.Plain, `{"name":"Acme"}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	accountID, _ := r.json(t)["id"].(string)
	if _, err := listener.WaitForNotification(ctx); err != nil {
		t.Fatalf("no outbox notification after the commit: %v", err)
	}
	evs, err := db.Store.EventsForObject(ctx, db.Env, accountID)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events of the account: %v %v", evs, err)
	}
	ev := evs[0]
	// The API process started nothing: no run exists, and the event is still owed its start.
	tc, err := client.Dial(app.TemporalOptions(cfg, quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if _, err := tc.DescribeWorkflowExecution(ctx, wire.WorkflowID(ev.ID), ""); err == nil {
		t.Fatal("the API process started the event's run itself")
	}
	if ev.DispatchedAt != nil {
		t.Fatalf("event dispatched at %v with no worker running", ev.DispatchedAt)
	}

	stopWorker := run(app.Parts{Worker: true})
	defer stopWorker()
	waitFor(t, 2*time.Minute, "the event the API committed delivered by the worker, and marked", func() bool {
		e := db.Load(t, ev.ID)
		return e.Status == models.EventDelivered && dispatchMarked(e)
	})
	if got := rc.Received(); len(got) != 1 || got[0].Header.Get("webhook-id") != ev.ID {
		t.Fatalf("receiver got %d requests, want the event once", len(got))
	}
	evs, _ = db.Store.EventsForObject(ctx, db.Env, accountID)
	desc, err := tc.DescribeWorkflowExecution(ctx, wire.WorkflowID(ev.ID), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := evs[0]; got.DispatchedAt == nil || got.WorkflowID != wire.WorkflowID(ev.ID) || got.RunID != desc.WorkflowExecutionInfo.Execution.RunId {
		t.Errorf("claimed event marked %v / %q / %q, want dispatched with run %s", got.DispatchedAt, got.WorkflowID, got.RunID, desc.WorkflowExecutionInfo.Execution.RunId)
	}
}

// endpointAndKey gives db's environment one enabled endpoint at url and a secret key.
func endpointAndKey(t *testing.T, db *webhooktest.DB, url string) keys.Created {
	t.Helper()
	ctx := context.Background()
	secret, _ := signing.NewSecret()
	if _, err := webhook.CreateEndpoint(ctx, db.Store, db.Env, models.WebhookEndpoint{URL: url, Method: "POST", Enabled: true, Secret: secret}, time.Now(), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
		t.Fatal(err)
	}
	return secretKey(t, db.Store, db.Env.OrganizationID, db.Env.Name)
}

// secretKey creates a secret API key for the organization orgID's environment env.
func secretKey(t *testing.T, st keys.Store, orgID, env string) keys.Created {
	t.Helper()
	key, err := keys.NewManager(st).Create(context.Background(), orgID, env, "secret")
	if err != nil {
		t.Fatal(err)
	}
	return key
}
