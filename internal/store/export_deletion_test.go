package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// DeleteEndpointBeforeIssue41ForTest is an endpoint's deletion as it was before issue 41,
// the "before" of BenchmarkEndpointDeletion: in the request's transaction, the events of
// every unfinished delivery locked by one statement listing them all (looked up twice),
// the deliveries skipped, the events summarised by the summary of the time (one EXISTS
// per status). Past 65,535 such events PostgreSQL refuses the statement.
func (s *Store) DeleteEndpointBeforeIssue41ForTest(ctx context.Context, env Env, id string) error {
	_, err := s.InTx(ctx, env, func(tx *Tx) error {
		if _, err := tx.LockEndpoint(id); err != nil {
			return err
		}
		if err := scope(tx.db, tx.env).Where("id = ?", id).Delete(&models.WebhookEndpoint{}).Error; err != nil {
			return err
		}
		unfinished := scope(tx.db.Model(&models.WebhookDelivery{}), tx.env).
			Where("endpoint_id = ? AND status IN ?", id, unfinishedStatuses).Session(&gorm.Session{})
		var eventIDs []string
		for range 2 {
			var ids []string
			if err := unfinished.Pluck("event_id", &ids).Error; err != nil {
				return err
			}
			if err := lockEventRows(tx.db, tx.dialect, ids...); err != nil {
				return err
			}
			eventIDs = append(eventIDs, ids...)
		}
		slices.Sort(eventIDs)
		eventIDs = slices.Compact(eventIDs)
		now := tx.Now()
		if err := unfinished.Updates(map[string]any{
			"status": models.EventSkipped, "last_error": models.DeliveryEndpointDeleted, "updated_at": now,
		}).Error; err != nil {
			return err
		}
		if len(eventIDs) == 0 {
			return nil
		}
		return tx.db.Model(&models.Event{}).Where("id IN ?", eventIDs).
			Updates(map[string]any{"status": gorm.Expr(summaryBeforeIssue41), "updated_at": now}).Error
	})
	return err
}

// summaryBeforeIssue41 is summarySQL as it was: one EXISTS per status.
var summaryBeforeIssue41 = func() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, st := range summaryOrder {
		fmt.Fprintf(&b, " WHEN EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id AND d.status = '%s') THEN '%s'", st, st)
	}
	fmt.Fprintf(&b, " ELSE '%s' END", models.EventSkipped)
	return b.String()
}()
