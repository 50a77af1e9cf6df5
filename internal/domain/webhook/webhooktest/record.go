package webhooktest

import (
	"context"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// RecordAttempt writes an attempt and its delivery's status as the webhook domain
// decides it (webhook.AttemptChange), with its event's summary, in one transaction,
// without judging its endpoint's health (webhook.RecordAttempt does both): for tests that
// set attempts up, as the store's own RecordDeliveryAttempt did before the status moved
// to the webhook domain (issue 42).
func RecordAttempt(ctx context.Context, st *store.Store, env models.Env, a *models.DeliveryAttempt, status string) error {
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		_, err := tx.RecordDeliveryAttempt(a, webhook.AttemptChange(a, status))
		return err
	})
	return err
}
