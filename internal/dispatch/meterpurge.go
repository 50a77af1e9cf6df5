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

// MeterPurgeStore is what starting meter purge workflows needs of the database.
type MeterPurgeStore interface {
	UnstartedPurges(ctx context.Context, before time.Time, limit int) ([]models.MeterPurge, error)
	MarkPurgeStarted(ctx context.Context, meterID string, at time.Time) error
}

var _ MeterPurgeStore = (*store.Store)(nil)

// MeterPurges starts the MeterPurge workflow of deleted meters (CONTRACT §21): right
// after the API deletes one (StartMeterPurgeDetached, off the request path, called by
// meters.Service), and for whatever that missed (RunSweeper, in the worker), so that
// Temporal's absence only delays a purge (and the slot it holds among the 32).
type MeterPurges struct {
	Client client.Client
	Store  MeterPurgeStore
	Log    *slog.Logger
	// SweepAge: purges younger than this are left to the API's start; default 5s.
	SweepAge time.Duration
	Health   Reachability // nil: always try

	holds holds // starts set aside after they failed
}

// StartMeterPurge starts the deleted meter's workflow and marks its purge started
// (startJob): a deleted meter has one MeterPurge workflow, ever.
func (p *MeterPurges) StartMeterPurge(ctx context.Context, mp models.MeterPurge) error {
	return startJob(ctx, p.Client, job{
		workflowID:     wire.MeterPurgeWorkflowID(mp.MeterID),
		workflowType:   wire.MeterPurgeWorkflowName,
		environmentID:  mp.EnvironmentID,
		organizationID: mp.OrganizationID,
		summary:        fmt.Sprintf("Purge of deleted meter %s (%s)", mp.MeterKey, mp.MeterID),
		input:          wire.MeterPurgeInput{MeterID: mp.MeterID, EnvironmentID: mp.EnvironmentID},
		markStarted: func(ctx context.Context, at time.Time) error {
			return p.Store.MarkPurgeStarted(ctx, mp.MeterID, at)
		},
	})
}

// StartMeterPurgeDetached is StartMeterPurge right after the meter's deletion commits,
// without making the request wait (startDetached): a start that fails is logged, and the
// sweeper starts it.
func (p *MeterPurges) StartMeterPurgeDetached(ctx context.Context, mp models.MeterPurge) {
	startDetached(ctx, p.Log, "meter purge", func(ctx context.Context) error { return p.StartMeterPurge(ctx, mp) }, "meter_id", mp.MeterID)
}

// Sweep starts the workflow of every purge older than SweepAge that has none, and says
// how many: a start that fails fails only itself (sweep), failures in a
// row stop it (Temporal is likely away).
func (p *MeterPurges) Sweep(ctx context.Context) (int, error) {
	return jobSweep(p.SweepAge, &p.holds, p.Log, "meter purge", p.Store.UnstartedPurges, p.StartMeterPurge,
		func(mp models.MeterPurge) (string, string) { return mp.MeterID, mp.EnvironmentID }).run(ctx)
}

// RunSweeper sweeps every interval until ctx ends, while Temporal answers.
func (p *MeterPurges) RunSweeper(ctx context.Context, every time.Duration) {
	runJobSweeper(ctx, every, p.Health, p.Log, "meter purge", p.Sweep)
}
