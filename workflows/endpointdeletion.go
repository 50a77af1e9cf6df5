package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/revops/revops/activities"
	"github.com/revops/revops/workflows/wire"
)

// endpointDeletionPagesPerRun bounds a run's history (about six events a page): past it
// the workflow continues as new. At webhook.DeletionRows deliveries a page, a run ends
// 300,000 deliveries.
const endpointDeletionPagesPerRun = 300

// EndpointDeletion ends a deleted endpoint's unfinished deliveries skipped (CONTRACT §13,
// §21), one bounded page per SkipDeletedEndpointPage activity until none is left, then
// removes its deletion row (EndEndpointDeletion), which frees its slot among the
// environment's 16 endpoints: the shape of MeterPurge (runPages).
func EndpointDeletion(ctx workflow.Context, in wire.EndpointDeletionInput) (wire.EndpointDeletionResult, error) {
	var d *activities.EndpointDeletion
	c := pageCounts{Pages: in.Pages, Rows: in.Rows}
	err := runPages(ctx, in.EnvironmentID, endpointDeletionPagesPerRun, &c, d.SkipDeletedEndpointPage, d.EndEndpointDeletion,
		activities.EndpointDeletionInput{EndpointID: in.EndpointID, EnvironmentID: in.EnvironmentID}, func(ctx workflow.Context) error {
			in.Pages, in.Rows = c.Pages, c.Rows
			return workflow.NewContinueAsNewError(ctx, wire.EndpointDeletionWorkflowName, in)
		})
	return wire.EndpointDeletionResult(c), err
}
