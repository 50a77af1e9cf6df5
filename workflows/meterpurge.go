package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// meterPurgePagesPerRun bounds a run's history (about six events a page): past it the
// workflow continues as new. At meters.PurgeRows rows a page, a run deletes 1.5M rows.
const meterPurgePagesPerRun = 300

// MeterPurge deletes a deleted meter's figures (CONTRACT §21), one bounded page per
// PurgeMeterPage activity until nothing is left, then its purge row (EndMeterPurge), which
// frees its slot among the environment's 32 meters.
func MeterPurge(ctx workflow.Context, in wire.MeterPurgeInput) (wire.MeterPurgeResult, error) {
	var p *activities.MeterPurge
	c := pageCounts{Pages: in.Pages, Rows: in.Rows}
	err := runPages(ctx, in.EnvironmentID, meterPurgePagesPerRun, &c, p.PurgeMeterPage, p.EndMeterPurge,
		activities.MeterPurgeInput{MeterID: in.MeterID}, func(ctx workflow.Context) error {
			in.Pages, in.Rows = c.Pages, c.Rows
			return workflow.NewContinueAsNewError(ctx, wire.MeterPurgeWorkflowName, in)
		})
	return wire.MeterPurgeResult(c), err
}
