package dispatch

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// EndpointDeletionStore is what starting endpoint deletion workflows needs of the database.
type EndpointDeletionStore interface {
	UnstartedEndpointDeletions(ctx context.Context, before time.Time, limit int) ([]models.EndpointDeletion, error)
	MarkEndpointDeletionStarted(ctx context.Context, endpointID string, at time.Time) error
}

var _ EndpointDeletionStore = (*store.Store)(nil)

// EndpointDeletions starts the EndpointDeletion workflow of deleted webhook endpoints
// (CONTRACT §21), as MeterPurges does for meters: right after the API or the dashboard
// deletes one (StartEndpointDeletionDetached, off the request path, called by
// webhook.Endpoints), and for whatever that missed (RunSweeper, in the worker), so that
// a crash after the commit or Temporal's absence only delays the end of the endpoint's
// deliveries (and the slot it holds among the 16).
type EndpointDeletions struct {
	Client client.Client
	Store  EndpointDeletionStore
	Log    *slog.Logger
	// SweepAge: deletions younger than this are left to the API's start; default 5s.
	SweepAge time.Duration
	Health   Reachability // nil: always try

	holds holds // starts set aside after they failed
}

// StartEndpointDeletion starts the deleted endpoint's workflow and marks its deletion
// started (startJob): a deleted endpoint has one EndpointDeletion workflow, ever.
func (e *EndpointDeletions) StartEndpointDeletion(ctx context.Context, d models.EndpointDeletion) error {
	return startJob(ctx, e.Client, job{
		workflowID:     wire.EndpointDeletionWorkflowID(d.EndpointID),
		workflowType:   wire.EndpointDeletionWorkflowName,
		environmentID:  d.EnvironmentID,
		organizationID: d.OrganizationID,
		summary:        "Unfinished deliveries of deleted webhook endpoint " + d.EndpointID,
		input:          wire.EndpointDeletionInput{EndpointID: d.EndpointID, EnvironmentID: d.EnvironmentID},
		markStarted: func(ctx context.Context, at time.Time) error {
			return e.Store.MarkEndpointDeletionStarted(ctx, d.EndpointID, at)
		},
	})
}

// StartEndpointDeletionDetached is StartEndpointDeletion right after the endpoint's
// deletion commits, without making the request wait (startDetached): a start that fails
// is logged, and the sweeper starts it.
func (e *EndpointDeletions) StartEndpointDeletionDetached(ctx context.Context, d models.EndpointDeletion) {
	startDetached(ctx, e.Log, "endpoint deletion", func(ctx context.Context) error { return e.StartEndpointDeletion(ctx, d) }, "endpoint_id", d.EndpointID)
}

// Sweep starts the workflow of every deletion older than SweepAge that has none, and
// says how many: a start that fails fails only itself (sweep), failures in a row stop it
// (Temporal is likely away).
func (e *EndpointDeletions) Sweep(ctx context.Context) (int, error) {
	return jobSweep(e.SweepAge, &e.holds, e.Log, "endpoint deletion", e.Store.UnstartedEndpointDeletions, e.StartEndpointDeletion,
		func(d models.EndpointDeletion) (string, string) { return d.EndpointID, d.EnvironmentID }).run(ctx)
}

// RunSweeper sweeps every interval until ctx ends, while Temporal answers.
func (e *EndpointDeletions) RunSweeper(ctx context.Context, every time.Duration) {
	runJobSweeper(ctx, every, e.Health, e.Log, "endpoint deletion", e.Sweep)
}
