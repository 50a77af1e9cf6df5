package store

import (
	"context"
	"fmt"
	"time"

	"github.com/revops/revops/models"
)

// Order lanes (CONTRACT §26). A lane is one endpoint and one object; its deliveries are
// the ordered ones (webhook_deliveries.ordered). At most one of a lane's unfinished
// deliveries is released (waiting_for = ''); the others wait, pending with no run. The
// webhook domain decides when a lane moves (internal/domain/webhook/lanes.go); the store
// reads and writes the rows, under the lane's lock: the object's sequence row, taken
// before any event's (lock order: endpoint, lane, event, health row).

// unfinishedIn is the partial index's predicate (webhook_deliveries_lane) on the
// deliveries named alias, spelled with literals so that PostgreSQL can prove a query's
// condition implies it.
func unfinishedIn(alias string) string {
	return alias + ".ordered AND " + alias + ".status IN ('pending', 'retrying')"
}

// LaneTail is the last unfinished delivery of a lane (highest sequence).
type LaneTail struct {
	EndpointID, ObjectID, EventID string
}

// LaneTails lists, for the lanes of endpointIDs × objectIDs, the event of each one's
// unfinished delivery with the highest sequence: a new delivery of the lane waits behind
// it (FanOut). One statement, by the lane index; the caller holds the objects' lanes.
func (tx *Tx) LaneTails(endpointIDs, objectIDs []string) ([]LaneTail, error) {
	var rows []LaneTail
	err := tx.db.Raw(`SELECT d.endpoint_id, d.object_id, d.event_id FROM webhook_deliveries d
	WHERE d.environment_id = ? AND d.endpoint_id IN ? AND d.object_id IN ? AND `+unfinishedIn("d")+`
	AND d.sequence = (SELECT MAX(x.sequence) FROM webhook_deliveries x
		WHERE x.endpoint_id = d.endpoint_id AND x.object_id = d.object_id AND `+unfinishedIn("x")+`)`,
		tx.env.ID, endpointIDs, objectIDs).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("lanes of the change's deliveries: %w", err)
	}
	return rows, nil
}

// LaneHead is the event of the lane's released unfinished delivery, other than the
// delivery except ("" when there is none): a replayed delivery waits behind it.
func (tx *Tx) LaneHead(endpointID, objectID, except string) (string, error) {
	var ids []string
	err := tx.db.Raw(`SELECT event_id FROM webhook_deliveries
	WHERE endpoint_id = ? AND object_id = ? AND `+unfinishedIn("webhook_deliveries")+` AND waiting_for = '' AND id <> ? LIMIT 1`,
		endpointID, objectID, except).Scan(&ids).Error
	if err != nil || len(ids) == 0 {
		return "", wrap(err, "head of lane")
	}
	return ids[0], nil
}

// WaitBehind makes delivery deliveryID wait behind event eventID in its lane (a replay
// joining a lane whose head is under way).
func (tx *Tx) WaitBehind(deliveryID, eventID string) error {
	return wrap(scope(tx.db.Model(&models.WebhookDelivery{}), tx.env).Where("id = ?", deliveryID).
		Updates(map[string]any{"waiting_for": eventID, "updated_at": tx.Now()}).Error, "wait in lane")
}

// LockEventLane locks the lane of event eventID's object (its sequence row) before the
// change locks the event: a replay may move the event's deliveries in their lanes.
func (tx *Tx) LockEventLane(eventID string) error {
	if tx.dialect != "postgres" {
		return nil // SQLite's write transaction is exclusive
	}
	var ids []string
	return wrap(tx.db.Raw(`SELECT s.object_id FROM object_sequences s
	WHERE s.environment_id = ? AND s.object_id = (SELECT object_id FROM events WHERE id = ? AND environment_id = ?)
	FOR UPDATE`, tx.env.ID, eventID, tx.env.ID).Scan(&ids).Error, "lock the lane of event "+eventID)
}

// LockEventsLanes locks the lanes of the objects of events eventIDs, in object order
// (§26's lock order, as a change about several objects takes them): a bulk replay page
// takes them all before any event, so that two pages over the same objects wait for
// one another rather than each holding a lane the other needs.
func (tx *Tx) LockEventsLanes(eventIDs []string) error {
	if tx.dialect != "postgres" || len(eventIDs) == 0 {
		return nil
	}
	var ids []string
	return wrap(tx.db.Raw(`SELECT s.object_id FROM object_sequences s
	WHERE s.environment_id = ? AND s.object_id IN (SELECT object_id FROM events WHERE id IN ? AND environment_id = ?)
	ORDER BY s.object_id FOR UPDATE OF s`, tx.env.ID, eventIDs, tx.env.ID).Scan(&ids).Error, "lock the lanes of a page")
}

// LockDeliveryLane locks the lane of delivery deliveryID when it is ordered, before the
// change locks its event (an ending releases the next of its lane).
func (tx *Tx) LockDeliveryLane(deliveryID string) error {
	if tx.dialect != "postgres" {
		return nil
	}
	var ids []string
	return wrap(tx.db.Raw(`SELECT s.object_id FROM object_sequences s
	JOIN webhook_deliveries d ON d.environment_id = s.environment_id AND d.object_id = s.object_id
	WHERE d.id = ? AND d.environment_id = ? AND d.ordered FOR UPDATE OF s`, deliveryID, tx.env.ID).Scan(&ids).Error,
		"lock the lane of delivery "+deliveryID)
}

// lockLanes locks the sequence rows of objects, in the order given (callers sort them).
func (tx *Tx) lockLanes(objects []string) error {
	if tx.dialect != "postgres" || len(objects) == 0 {
		return nil
	}
	var ids []string
	return wrap(tx.db.Raw(`SELECT object_id FROM object_sequences WHERE environment_id = ? AND object_id IN ?
	ORDER BY object_id FOR UPDATE`, tx.env.ID, objects).Scan(&ids).Error, "lock lanes")
}

// ReleaseNext releases the lane's lowest-sequence waiting delivery when the lane has no
// released unfinished one and its endpoint is enabled, and marks its event for
// redispatch the way a replay does (redispatch_at; AfterCommit or the sweeper reaches
// its workflow with SignalWithStart, whose replay signal makes the run read its pending
// deliveries). The caller holds the lane. It returns the delivery released ("" when
// none).
func (tx *Tx) ReleaseNext(endpointID, objectID string) (string, error) {
	var next []struct{ ID, EventID string }
	err := tx.db.Raw(`SELECT d.id, d.event_id FROM webhook_deliveries d
	WHERE d.endpoint_id = ? AND d.object_id = ? AND d.environment_id = ? AND `+unfinishedIn("d")+` AND d.waiting_for <> ''
	AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.enabled)
	AND NOT EXISTS (SELECT 1 FROM webhook_deliveries r WHERE r.endpoint_id = d.endpoint_id AND r.object_id = d.object_id
		AND `+unfinishedIn("r")+` AND r.waiting_for = '')
	ORDER BY d.sequence, d.id LIMIT 1`, endpointID, objectID, tx.env.ID).Scan(&next).Error
	if err != nil || len(next) == 0 {
		return "", wrap(err, "next of lane")
	}
	now := tx.Now()
	if err := scope(tx.db.Model(&models.WebhookDelivery{}), tx.env).Where("id = ?", next[0].ID).
		Updates(map[string]any{"waiting_for": "", "updated_at": now}).Error; err != nil {
		return "", fmt.Errorf("release delivery %s: %w", next[0].ID, err)
	}
	if err := tx.markForRedispatch(next[0].EventID, now); err != nil {
		return "", err
	}
	return next[0].ID, nil
}

// markForRedispatch marks event id for redispatch at now, as a replay does, and hands it
// over after commit.
func (tx *Tx) markForRedispatch(eventID string, now time.Time) error {
	if err := updateEvent(tx.db, tx.env, eventID, map[string]any{"redispatch_at": now, "updated_at": now}, "release"); err != nil {
		return err
	}
	var ev models.Event
	if err := scope(tx.db, tx.env).Where("id = ?", eventID).Take(&ev).Error; err != nil {
		return fmt.Errorf("reload event %s: %w", eventID, err)
	}
	tx.handOver(ev)
	return nil
}

// ReleaseLanesOf releases the next delivery of the lanes of endpoint endpointID with
// waiting deliveries and none released among its first limit lanes (its re-enabling),
// each under its lane, in object order; it returns how many it released (there may be
// more lanes, which the minute check releases: StuckLanes). It reads limit lanes, not
// their deliveries (stuckLanesOf, §21).
func (tx *Tx) ReleaseLanesOf(endpointID string, limit int) (int, error) {
	objects, err := tx.stuckLanesOf(endpointID, limit)
	if err != nil {
		return 0, err
	}
	if err := tx.lockLanes(objects); err != nil {
		return 0, err
	}
	n := 0
	for _, o := range objects {
		id, err := tx.ReleaseNext(endpointID, o)
		if err != nil {
			return n, err
		}
		if id != "" {
			n++
		}
	}
	return n, nil
}

// Lane names one lane of an environment.
type Lane struct {
	OrganizationID, EnvironmentID, Environment, EndpointID, ObjectID string
}

// wrap annotates err with what, or is nil.
func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// LaneDelivery is an ordered delivery the minute check looks at, with its environment.
type LaneDelivery struct {
	OrganizationID, EnvironmentID, Environment string
	ID, EndpointID, ObjectID                   string
	UpdatedAt                                  time.Time
	models.RetryPolicy                         `gorm:"embedded"`
}

// Env is the delivery's environment.
func (d LaneDelivery) Env() Env {
	return Env{OrganizationID: d.OrganizationID, ID: d.EnvironmentID, Name: d.Environment}
}

// laneDeliveriesSQL lists up to limit ($2) unfinished ordered deliveries of every
// environment, last changed before $1, oldest first, matching cond: read in order from
// migration 138's index that cond names (expiredCond, silentCond) and stopped at the
// limit (§21).
func laneDeliveriesSQL(cond string) string {
	return `SELECT env.organization_id, d.environment_id, env.name AS environment, d.id, d.endpoint_id,
	d.object_id, d.updated_at, d.retry_initial_interval_ms, d.retry_backoff_coefficient, d.retry_maximum_interval_ms,
	d.retry_maximum_attempts
	FROM webhook_deliveries d JOIN environments env ON env.id = d.environment_id
	WHERE ` + unfinishedIn("d") + ` AND d.updated_at < ? AND ` + cond + `
	ORDER BY d.updated_at, d.id LIMIT ?`
}

// expiredCond is a waiting delivery (webhook_deliveries_lane_waiting); silentCond a
// released one (webhook_deliveries_lane_head_age) whose event's workflow has been reached.
const (
	expiredCond = "d.status = 'pending' AND d.waiting_for <> ''"
	silentCond  = `d.waiting_for = '' AND EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id
		AND e.dispatched_at IS NOT NULL AND e.redispatch_at IS NULL)`
)

// laneDeliveries runs laneDeliveriesSQL(cond).
func (s *Store) laneDeliveries(ctx context.Context, cond string, before time.Time, limit int) ([]LaneDelivery, error) {
	var rows []LaneDelivery
	err := s.db.WithContext(ctx).Raw(laneDeliveriesSQL(cond), before, limit).Scan(&rows).Error
	return rows, err
}

// ExpiredWaits lists up to limit deliveries of every environment that have waited in
// their order lanes since before `before` (a waiting delivery changes only when it is
// created, replayed or released: its updated_at is when it began to wait).
func (s *Store) ExpiredWaits(ctx context.Context, before time.Time, limit int) ([]LaneDelivery, error) {
	rows, err := s.laneDeliveries(ctx, expiredCond, before, limit)
	return rows, wrap(err, "expired waits")
}

// SilentReleased lists up to limit released unfinished ordered deliveries of every
// environment unchanged since before `before` whose event's workflow has been reached
// (dispatched, no redispatch pending): the minute check ends those silent for longer
// than their retry schedule (their run closed).
func (s *Store) SilentReleased(ctx context.Context, before time.Time, limit int) ([]LaneDelivery, error) {
	rows, err := s.laneDeliveries(ctx, silentCond, before, limit)
	return rows, wrap(err, "silent released deliveries")
}

// LockLane locks the lane of objectID (its sequence row).
func (tx *Tx) LockLane(objectID string) error { return tx.lockLanes([]string{objectID}) }
