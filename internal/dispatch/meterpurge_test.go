package dispatch_test

import (
	"testing"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// CONTRACT §21: a deleted meter's purge is started on revops-jobs, fair by its
// environment, under the id meter-purge-<meter id> (one run per meter, ever), and marked;
// the sweeper starts what the API's start missed, once, and marks nothing while Temporal
// refuses.
func TestMeterPurgeStartsAndSweeps(t *testing.T) {
	purge := func(id string) store.Job {
		return store.PurgeOf(models.MeterPurge{MeterID: id, OrganizationID: "org-1", EnvironmentID: "env-1", MeterKey: "calls"})
	}
	checkStartsAndSweeps(t, wire.MeterPurgeWorkflowName, purge("m-1"), purge("m-2"),
		"meter-purge-m-1", wire.MeterPurgeInput{MeterID: "m-1", EnvironmentID: "env-1"})
}
