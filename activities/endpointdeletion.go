package activities

import (
	"context"
	"fmt"

	"github.com/revops/revops/internal/domain/webhook"
)

// EndpointDeletionStore is what ending a deleted endpoint's unfinished deliveries needs
// of the database (the jobs' pool, CONTRACT §21).
type EndpointDeletionStore interface {
	webhook.DeletionPages
	EndEndpointDeletion(ctx context.Context, endpointID string) error
}

// EndpointDeletion holds the endpoint deletion activities' dependencies.
type EndpointDeletion struct {
	Store EndpointDeletionStore
	// Rows bounds a page (0: webhook.DeletionRows); tests make it small so that a
	// deletion takes many pages.
	Rows int
}

// EndpointDeletionInput names the deleted endpoint and its environment.
type EndpointDeletionInput struct {
	EndpointID    string
	EnvironmentID string
}

// EndpointDeletionPageOutput is what a page ended. Only counts: the workflow history
// never holds an event or a URL.
type EndpointDeletionPageOutput struct {
	Rows int  // deliveries ended skipped
	Done bool // none of the endpoint's deliveries is left unfinished
}

// SkipDeletedEndpointPage ends the next page of a deleted endpoint's unfinished
// deliveries skipped (webhook.SkipDeletedEndpointPage). The page is decided in the
// database: an attempt cut anywhere is simply run again and ends what is left. A panic
// ends the page alone (ErrTypePanic).
func (d *EndpointDeletion) SkipDeletedEndpointPage(ctx context.Context, in EndpointDeletionInput) (EndpointDeletionPageOutput, error) {
	return guardedPage(ctx, "endpoint_deletion_page", func() (EndpointDeletionPageOutput, error) { return d.skipPage(ctx, in) },
		"endpoint_id", in.EndpointID, "environment_id", in.EnvironmentID)
}

func (d *EndpointDeletion) skipPage(ctx context.Context, in EndpointDeletionInput) (EndpointDeletionPageOutput, error) {
	limit := d.Rows
	if limit <= 0 {
		limit = webhook.DeletionRows
	}
	rows, err := webhook.SkipDeletedEndpointPage(ctx, d.Store, in.EnvironmentID, in.EndpointID, limit)
	if err != nil {
		return EndpointDeletionPageOutput{}, fmt.Errorf("endpoint deletion page: %w", err)
	}
	return EndpointDeletionPageOutput{Rows: rows, Done: rows < limit}, nil
}

// EndEndpointDeletion removes the deletion's row once no delivery is left unfinished:
// the deleted endpoint no longer counts toward its environment's 16 (CONTRACT §21).
func (d *EndpointDeletion) EndEndpointDeletion(ctx context.Context, in EndpointDeletionInput) error {
	return d.Store.EndEndpointDeletion(ctx, in.EndpointID)
}
