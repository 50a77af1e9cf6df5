package dispatch_test

import (
	"testing"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// CONTRACT §21: a deleted endpoint's job is started on revops-jobs, fair by its
// environment, under the id endpoint-deletion-<endpoint id> (one run per endpoint, ever),
// and marked; the sweeper starts what the API's start missed (a crash after the commit),
// once, and marks nothing while Temporal refuses.
func TestEndpointDeletionStartsAndSweeps(t *testing.T) {
	deletion := func(id string) store.Job {
		return store.DeletionOf(models.EndpointDeletion{EndpointID: id, OrganizationID: "org-1", EnvironmentID: "env-1"})
	}
	checkStartsAndSweeps(t, wire.EndpointDeletionWorkflowName, deletion("ep-1"), deletion("ep-2"),
		"endpoint-deletion-ep-1", wire.EndpointDeletionInput{EndpointID: "ep-1", EnvironmentID: "env-1"})
}
