package webhook

import (
	"context"

	"github.com/revops/revops/models"
)

// DeletionRows is at most how many unfinished deliveries one page of a deleted endpoint's
// EndpointDeletion job ends skipped (CONTRACT §21): a short transaction locking as many
// events, whatever the endpoint's backlog.
const DeletionRows = 1000

// DeletionStarter starts a deleted endpoint's EndpointDeletion workflow once its deletion
// has committed, without making the request wait (dispatch.EndpointDeletions): a start
// that fails is left to the sweeper, which finds the deletion's row.
type DeletionStarter interface {
	StartEndpointDeletionDetached(ctx context.Context, d models.EndpointDeletion)
}

// DeletionOf is the deletion a deleted endpoint's row records (store.Tx.DeleteEndpoint).
func DeletionOf(ep models.WebhookEndpoint) models.EndpointDeletion {
	return models.EndpointDeletion{EndpointID: ep.ID, OrganizationID: ep.OrganizationID, EnvironmentID: ep.EnvironmentID}
}
