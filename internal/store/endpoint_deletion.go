package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// Deleting a webhook endpoint (CONTRACT §13, §21), as deleting a meter: DeleteEndpoint
// removes the endpoint's row and records an endpoint_deletions row in the same
// transaction, whatever the endpoint's backlog, so the endpoint is 404 and takes no new
// delivery at once; its unfinished deliveries then end skipped in the background, a
// bounded page at a time (SkipDeletedEndpointPage, run by the EndpointDeletion workflow
// on revops-jobs), and the deletion row goes last (EndEndpointDeletion). Until then the
// row counts toward the environment's 16 endpoints, so deleting and re-creating cannot
// pile up backlogs. Meanwhile whoever touches such a delivery first ends it skipped too
// (unlessEndpointGone), and its run's next attempt finds no endpoint and sends nothing.
func init() {
	register(migration{version: 120, name: "endpoint_deletions", sql: scopedTable("endpoint_deletions", "endpoint_id", `
	created_at {{ts}} NOT NULL,
	started_at {{ts}}
);
CREATE INDEX endpoint_deletions_environment ON endpoint_deletions (environment_id);
CREATE INDEX endpoint_deletions_unstarted ON endpoint_deletions (created_at) WHERE started_at IS NULL`)})
}

// CountEndpoints counts the environment's endpoints, and its deleted endpoints whose
// unfinished deliveries are still to end (endpoint_deletions), in one statement.
func (tx *Tx) CountEndpoints() (endpoints, deleting int64, err error) {
	return tx.countWithDeleted("webhook_endpoints", "endpoint_deletions", "webhook endpoints")
}

// countWithDeleted counts the environment's rows of table, and those of its deletions
// table (deleted ones whose job has not ended), in one statement; what names them in
// errors.
func (tx *Tx) countWithDeleted(table, deletions, what string) (rows, deleted int64, err error) {
	var n struct{ Counted, Deleted int64 }
	err = tx.db.Raw(`SELECT (SELECT COUNT(*) FROM `+table+` WHERE environment_id = ?) AS counted,
		(SELECT COUNT(*) FROM `+deletions+` WHERE environment_id = ?) AS deleted`, tx.env.ID, tx.env.ID).Scan(&n).Error
	if err != nil {
		return 0, 0, fmt.Errorf("count %s: %w", what, err)
	}
	return n.Counted, n.Deleted, nil
}

// DeleteEndpoint removes ep's row (locked by the caller) and records its deletion: two
// statements whatever its backlog. Its deliveries and attempts stay; its health row too,
// which the health check removes (the deletion never locks it, CONTRACT §23).
func (tx *Tx) DeleteEndpoint(ep models.WebhookEndpoint) error {
	if err := scope(tx.db, tx.env).Where("id = ?", ep.ID).Delete(&models.WebhookEndpoint{}).Error; err != nil {
		return fmt.Errorf("delete webhook endpoint %s: %w", ep.ID, err)
	}
	d := models.EndpointDeletion{EndpointID: ep.ID, OrganizationID: tx.env.OrganizationID, EnvironmentID: tx.env.ID,
		CreatedAt: tx.Now()}
	if err := tx.db.Create(&d).Error; err != nil {
		return fmt.Errorf("record deletion of webhook endpoint %s: %w", ep.ID, err)
	}
	tx.startJob(DeletionOf(d)) // its EndpointDeletion workflow, after commit
	return nil
}

// SkipDeletedEndpointPage changes at most maxRows deliveries of a deleted endpoint of
// environment envID as u says (webhook.Transition decides it: the unfinished ones end
// skipped, endpoint_deleted), summarises their events again, and says how many it
// changed; fewer than maxRows means none is left. It is one of the jobs' bounded
// batches: it opens its own transaction, one page of the EndpointDeletion job. One short
// transaction on the caller's pool (the jobs', with its lock timeout, CONTRACT §21) of
// three statements: the first finds the page (webhook_deliveries_env_endpoint) and locks
// its events in id order, as every change of several events' deliveries locks them
// (lockEvents); the other two change the page's deliveries and events by their keys, so
// a page costs the same however large the backlog, and no list is longer than the page.
// No endpoint nor health row is locked (CONTRACT §23). A deleted endpoint's deliveries
// never become unfinished again (unlessEndpointGone; a replay only takes endpoints that
// exist), so a page cut anywhere is simply run again. A job's own bounded batch, it is
// one of the store's named exceptions to InTx (issue 42): it opens its own transaction.
func (s *Store) SkipDeletedEndpointPage(ctx context.Context, envID, endpointID string, maxRows int, u DeliveryUpdate) (rows int, err error) {
	ctx, end := s.span(ctx, "db endpoint deletion page")
	defer end(&err)
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var page []struct{ EventID, DeliveryID string }
		if err := tx.Raw(pageSQL(s.dialect), envID, endpointID, u.From, maxRows).Scan(&page).Error; err != nil {
			return fmt.Errorf("unfinished deliveries of deleted endpoint %s: %w", endpointID, err)
		}
		if len(page) == 0 {
			return nil
		}
		events, deliveries := make([]string, len(page)), make([]string, len(page))
		for i, p := range page {
			events[i], deliveries[i] = p.EventID, p.DeliveryID
		}
		now := changeTime()
		res := u.apply(tx.Where("id IN ?", deliveries), now)
		if res.Error != nil {
			return fmt.Errorf("skip deliveries of deleted endpoint %s: %w", endpointID, res.Error)
		}
		rows = int(res.RowsAffected)
		return summarizeEvents(tx, now, events...)
	})
	if err != nil {
		return 0, dbError(err)
	}
	return rows, nil
}

// pageSQL selects up to ? (the last argument) unfinished deliveries of a deleted
// endpoint with their events, in event id order, and on PostgreSQL locks those events.
func pageSQL(dialect string) string {
	q := `SELECT e.id AS event_id, d.id AS delivery_id FROM (
	SELECT id, event_id FROM webhook_deliveries WHERE environment_id = ? AND endpoint_id = ? AND status IN ? LIMIT ?
) d JOIN events e ON e.id = d.event_id ORDER BY e.id`
	if dialect == "postgres" {
		q += " FOR UPDATE OF e"
	}
	return q
}

// unlessEndpointGone is the value a change sets in a status or last_error column of
// webhook_deliveries (named table in the statement): value while the delivery's endpoint
// exists, gone once it was deleted. Whoever ends or continues a deleted endpoint's
// delivery — an attempt recorded in flight, a run settling — ends it skipped
// (endpoint_deleted) as its deletion's job would (CONTRACT §13). The endpoint's row is
// read as the statement sees it: a deletion committed after the statement began comes
// after it, and its job's pages end what it left unfinished.
func unlessEndpointGone(table, value, gone string) string {
	return "CASE WHEN EXISTS (SELECT 1 FROM webhook_endpoints ep WHERE ep.id = " + table + ".endpoint_id) THEN " +
		value + " ELSE " + gone + " END"
}

// EndEndpointDeletion removes a deleted endpoint's deletion row once its deliveries have
// ended: its slot among the environment's 16 is free again. Removing a row already gone
// is no error (a retried activity).
func (s *Store) EndEndpointDeletion(ctx context.Context, endpointID string) error {
	return endpointDeletions.end(ctx, s.db, endpointID)
}

// UnstartedEndpointDeletions lists deletion rows recorded before before whose
// EndpointDeletion workflow was not started, oldest first (the sweeper).
func (s *Store) UnstartedEndpointDeletions(ctx context.Context, before time.Time, limit int) ([]models.EndpointDeletion, error) {
	return endpointDeletions.unstarted(ctx, s.db, before, limit)
}

// MarkEndpointDeletionStarted records that a deleted endpoint's EndpointDeletion workflow
// was started.
func (s *Store) MarkEndpointDeletionStarted(ctx context.Context, endpointID string, at time.Time) error {
	return endpointDeletions.markStarted(ctx, s.db, endpointID, at)
}

var endpointDeletions = jobRows[models.EndpointDeletion]{table: "endpoint_deletions", key: "endpoint_id",
	what: "deletion of webhook endpoint", list: "unstarted endpoint deletions"}
