package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
)

// meterPurgePagesPerRun bounds a run's history (about six events a page): past it the
// workflow continues as new. At meters.PurgeRows rows a page, a run deletes 1.5M rows.
const meterPurgePagesPerRun = 300

// MeterPurgeInput is the deleted meter and, for a run that continued as new, how far the
// runs before it went (counts for the result; what is left is in the database).
// EnvironmentID is the fairness key of every page.
type MeterPurgeInput struct {
	MeterID       string
	EnvironmentID string
	Pages         int `json:",omitempty"`
	Rows          int `json:",omitempty"`
}

// MeterPurgeResult is what the purge deleted, over all its runs.
type MeterPurgeResult struct {
	Pages, Rows int
}

// MeterPurge deletes a deleted meter's figures (CONTRACT §21), one bounded page per
// PurgeMeterPage activity until nothing is left, then its purge row (EndMeterPurge), which
// frees its slot among the environment's 32 meters.
func MeterPurge(ctx workflow.Context, in MeterPurgeInput) (MeterPurgeResult, error) {
	var p *activities.MeterPurge
	c := pageCounts{Pages: in.Pages, Rows: in.Rows}
	err := runPages(ctx, in.EnvironmentID, meterPurgePagesPerRun, &c, p.PurgeMeterPage, p.EndMeterPurge,
		activities.MeterPurgeInput{MeterID: in.MeterID}, func(ctx workflow.Context) error {
			in.Pages, in.Rows = c.Pages, c.Rows
			return workflow.NewContinueAsNewError(ctx, MeterPurgeWorkflowName, in)
		})
	return MeterPurgeResult(c), err
}
