package store

import (
	"context"
	"fmt"
	"sync"
)

// The minute check's lane reads, bounded by their page (CONTRACT §21, §26): one
// environment's backlog (a lane of 100,000 deliveries waiting behind a dead receiver)
// must cost each pass no more than the page it handles. The expiry and silence sweeps
// read, oldest first, indexes of the waiting and of the released deliveries alone; the
// stuck-lane walk steps from lane to lane through the lane index (one probe per lane,
// however many deliveries wait in it) from where the last pass stopped.
//
// Migration 138: those indexes. webhook_deliveries_lane_waiting orders the waiting
// deliveries by when they began to wait (ExpiredWaits); webhook_deliveries_lane_head
// holds the released unfinished ones, at most one a lane, by lane (has a lane a head?)
// and webhook_deliveries_lane_head_age by age (SilentReleased). Built concurrently: the
// table is large and written on every change. Measured in docs/benchmarks.md.
func init() {
	register(migration{version: 138, name: "webhook_deliveries_lane_pages", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS webhook_deliveries_lane_waiting ON webhook_deliveries (updated_at, id)
	WHERE ordered AND status = 'pending' AND waiting_for <> '';
CREATE INDEX {{concurrently}} IF NOT EXISTS webhook_deliveries_lane_head ON webhook_deliveries (endpoint_id, object_id)
	WHERE ordered AND status IN ('pending', 'retrying') AND waiting_for = '';
CREATE INDEX {{concurrently}} IF NOT EXISTS webhook_deliveries_lane_head_age ON webhook_deliveries (updated_at, id)
	WHERE ordered AND status IN ('pending', 'retrying') AND waiting_for = ''`})
}

// laneCursor is the last lane the stuck-lane walk visited (zero: the walk starts over),
// shared by the store's copies: each minute pass goes on where the last one stopped.
type laneCursor struct {
	mu               sync.Mutex
	endpoint, object string
}

// walkedLane is one lane a walk visited, stuck when its endpoint is enabled and none of
// its unfinished deliveries is released.
type walkedLane struct {
	Lane
	Stuck int
}

// laneStep is the first lane, by the lane index, whose (endpoint, object) compares op to
// the arguments', as two scalar subqueries (endpoint, object): an index probe each.
func laneStep(op, endpoint, object string) string {
	one := func(col string) string {
		return `(SELECT d.` + col + ` FROM webhook_deliveries d WHERE ` + unfinishedIn("d") + `
		AND (d.endpoint_id, d.object_id) ` + op + ` (` + endpoint + `, ` + object + `)
		ORDER BY d.endpoint_id, d.object_id LIMIT 1)`
	}
	return one("endpoint_id") + ", " + one("object_id")
}

// walkLanesSQL visits up to limit lanes (endpoint, object) from the seed, in index
// order, while cont holds of the lane reached, and says of each whether it is stuck.
// Parameters: seed endpoint, seed object, limit, then cont's twice (cont also keeps the
// walk's end, a NULL lane, out of its rows).
func walkLanesSQL(seedOp, cont string) string {
	return `WITH RECURSIVE seed(endpoint_id, object_id) AS (SELECT CAST(? AS TEXT), CAST(? AS TEXT)),
walk(endpoint_id, object_id, n) AS (
	SELECT ` + laneStep(seedOp, "s.endpoint_id", "s.object_id") + `, 1 FROM seed s
	UNION ALL
	SELECT ` + laneStep(">", "w.endpoint_id", "w.object_id") + `, w.n + 1
	FROM walk w WHERE w.n < ? AND ` + cont + `)
SELECT COALESCE(e.organization_id, '') AS organization_id, COALESCE(e.environment_id, '') AS environment_id,
	COALESCE(env.name, '') AS environment, w.endpoint_id, w.object_id,
	CASE WHEN e.enabled AND NOT EXISTS (SELECT 1 FROM webhook_deliveries r
		WHERE r.endpoint_id = w.endpoint_id AND r.object_id = w.object_id AND ` + unfinishedIn("r") + ` AND r.waiting_for = '')
	THEN 1 ELSE 0 END AS stuck
FROM walk w LEFT JOIN webhook_endpoints e ON e.id = w.endpoint_id LEFT JOIN environments env ON env.id = e.environment_id
WHERE ` + cont + `
ORDER BY w.n`
}

// walkLanes runs a walk (walkLanesSQL) on db.
func walkLanes(ctx context.Context, s *Store, seedOp, cont string, args ...any) ([]walkedLane, error) {
	var rows []walkedLane
	err := s.db.WithContext(ctx).Raw(walkLanesSQL(seedOp, cont), args...).Scan(&rows).Error
	return rows, wrap(err, "walk the order lanes")
}

// StuckLanes lists the lanes, of every environment, of enabled endpoints with waiting
// deliveries and none released, among the next limit lanes after where the last call
// stopped (from the start again past the last lane): the minute check releases their
// next (a re-enabled endpoint's lanes past its first page). Each lane costs one probe of
// the lane index and one of the heads', however many deliveries wait in it (§21). Only
// the minute check calls it.
func (s *Store) StuckLanes(ctx context.Context, limit int) ([]Lane, error) {
	s.walk.mu.Lock()
	defer s.walk.mu.Unlock()
	var stuck []Lane
	seen := map[Lane]bool{}
	left := limit
	for pass := 0; pass < 2 && left > 0; pass++ {
		from := !(s.walk.endpoint == "" && s.walk.object == "")
		rows, err := walkLanes(ctx, s, ">", "w.endpoint_id IS NOT NULL", s.walk.endpoint, s.walk.object, left)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Stuck == 1 && !seen[r.Lane] {
				seen[r.Lane] = true
				stuck = append(stuck, r.Lane)
			}
		}
		left -= len(rows)
		if left > 0 { // the walk reached the last lane: the next starts over
			s.walk.endpoint, s.walk.object = "", ""
			if !from {
				break
			}
			continue
		}
		last := rows[len(rows)-1]
		s.walk.endpoint, s.walk.object = last.EndpointID, last.ObjectID
	}
	return stuck, nil
}

// stuckLanesOf lists the objects of the lanes of endpoint endpointID with none released,
// among its first limit lanes, in object order.
func (tx *Tx) stuckLanesOf(endpointID string, limit int) ([]string, error) {
	var rows []walkedLane
	err := tx.db.Raw(walkLanesSQL(">=", "w.endpoint_id = ?"), endpointID, "", limit, endpointID, endpointID).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("waiting lanes of %s: %w", endpointID, err)
	}
	var objects []string
	for _, r := range rows {
		if r.Stuck == 1 {
			objects = append(objects, r.ObjectID)
		}
	}
	return objects, nil
}
