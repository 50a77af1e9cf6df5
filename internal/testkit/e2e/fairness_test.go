package e2e

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"strconv"
	"testing"

	"go.temporal.io/sdk/client"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/models"
)

// CONTRACT §17, issue 20's noisy neighbour on the dev stack: the embedded Temporal
// server with `revops dev`'s dynamic config (devstack), and the API and a worker of 4
// delivery slots wired as `revops serve` wires them (app.Run), on PostgreSQL, with real
// HTTPS receivers. An organization whose receivers hang delays its own deliveries, not
// another's (webhooktest.NoisyNeighbour).
func TestNoisyNeighbourDelaysOnlyItsOwnDeliveries(t *testing.T) {
	const slots = 4
	db := webhooktest.New(t) // organization a
	ctx := context.Background()
	orgB, _, err := orgs.Create(ctx, db.Store, "Quiet", "ops@quiet.test")
	if err != nil {
		t.Fatal(err)
	}
	keyA := secretKey(t, db.Store, db.Env.OrganizationID, db.Env.Name)
	keyB := secretKey(t, db.Store, orgB.ID, models.EnvSandbox)

	temporalAddr := devTemporal(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	cfg, err := config.Load(flag.NewFlagSet("serve", flag.ContinueOnError), "serve", []string{
		"--http-addr", "127.0.0.1:0", "--metrics-addr", "", "--rate-limit", "0", "--temporal-address", temporalAddr,
		"--webhook-ca-file", webhooktest.CAFile(t), "--webhook-allow-private", "--worker-activity-slots", strconv.Itoa(slots),
	})
	if err != nil {
		t.Fatal(err)
	}
	tc, err := client.Dial(app.TemporalOptions(cfg, quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	runCtx, stop := context.WithCancel(ctx)
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- app.Run(runCtx, cfg, quiet, db.Store, tc, app.Parts{API: true, Worker: true, Ready: ready})
	}()
	defer func() { stop(); <-done }()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr
	case err := <-done:
		t.Fatalf("serve did not start: %v", err)
	}
	client := func(key string) *revops.Client {
		c, err := revops.NewClient(revops.WithBaseURL(base), revops.WithAPIKey(key), revops.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	webhooktest.NoisyNeighbour(t, slots, client(keyA.Plain), client(keyB.Plain))
}
