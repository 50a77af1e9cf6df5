package dispatch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// MeterBackfillStore is what starting meter backfill workflows needs of the database.
type MeterBackfillStore interface {
	UnstartedBackfills(ctx context.Context, before time.Time, limit int) ([]models.Meter, error)
	MarkBackfillStarted(ctx context.Context, id string, at time.Time) error
}

var _ MeterBackfillStore = (*store.Store)(nil)

// MeterBackfills starts the MeterBackfill workflow of new meters (CONTRACT §18): right
// after the API creates one (StartMeterBackfillDetached, off the request path, called by
// meters.Service), and for whatever that missed (RunSweeper, in the worker), so that
// Temporal's absence only delays a backfill.
type MeterBackfills struct {
	Client client.Client
	Store  MeterBackfillStore
	Log    *slog.Logger
	// SweepAge: meters younger than this are left to the API's start; default 5s.
	SweepAge time.Duration
	Health   Reachability // nil: always try

	holds holds // starts set aside after they failed
}

// StartMeterBackfill starts the meter's workflow and marks its backfill started
// (startJob): a meter has one MeterBackfill workflow, ever.
func (b *MeterBackfills) StartMeterBackfill(ctx context.Context, m models.Meter) error {
	return startJob(ctx, b.Client, job{
		workflowID:     wire.MeterBackfillWorkflowID(m.ID),
		workflowType:   wire.MeterBackfillWorkflowName,
		environmentID:  m.EnvironmentID,
		organizationID: m.OrganizationID,
		summary:        fmt.Sprintf("Backfill of meter %s (%s)", m.Key, m.ID),
		input:          wire.MeterBackfillInput{MeterID: m.ID, EnvironmentID: m.EnvironmentID},
		markStarted: func(ctx context.Context, at time.Time) error {
			return b.Store.MarkBackfillStarted(ctx, m.ID, at)
		},
	})
}

// StartMeterBackfillDetached is StartMeterBackfill right after the meter's creation
// commits, without making the request wait (startDetached): a start that fails is
// logged, and the sweeper starts it.
func (b *MeterBackfills) StartMeterBackfillDetached(ctx context.Context, m models.Meter) {
	startDetached(ctx, b.Log, "meter backfill", func(ctx context.Context) error { return b.StartMeterBackfill(ctx, m) }, "meter_id", m.ID)
}

// Sweep starts the workflow of every backfilling meter older than SweepAge that has
// none, and says how many: a start that fails fails only itself (sweep), failures in a
// row stop it (Temporal is likely away).
func (b *MeterBackfills) Sweep(ctx context.Context) (int, error) {
	return jobSweep(b.SweepAge, &b.holds, b.Log, "meter backfill", b.Store.UnstartedBackfills, b.StartMeterBackfill,
		func(m models.Meter) (string, string) { return m.ID, m.EnvironmentID }).run(ctx)
}

// RunSweeper sweeps every interval until ctx ends, while Temporal answers.
func (b *MeterBackfills) RunSweeper(ctx context.Context, every time.Duration) {
	runJobSweeper(ctx, every, b.Health, b.Log, "meter backfill", b.Sweep)
}
