package webhook

import (
	"context"

	"github.com/revops/revops/internal/store"
)

// DeletionRows is at most how many unfinished deliveries one page of a deleted endpoint's
// EndpointDeletion job ends skipped (CONTRACT §21): a short transaction locking as many
// events, whatever the endpoint's backlog.
const DeletionRows = 1000

// DeletionPages is what a deleted endpoint's job needs of the database (its jobs' pool).
type DeletionPages interface {
	SkipDeletedEndpointPage(ctx context.Context, envID, endpointID string, maxRows int, u store.DeliveryUpdate) (int, error)
}

var _ DeletionPages = (*store.Store)(nil)

// SkipDeletedEndpointPage ends at most maxRows unfinished deliveries of a deleted
// endpoint skipped (Transition: SkippedByDeletion), in one short transaction of the
// store's, and says how many; fewer than maxRows means none is left.
func SkipDeletedEndpointPage(ctx context.Context, st DeletionPages, envID, endpointID string, maxRows int) (int, error) {
	return st.SkipDeletedEndpointPage(ctx, envID, endpointID, maxRows, Transition(StatusChange{Change: SkippedByDeletion}))
}
