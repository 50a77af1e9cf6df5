package store

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/schema"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// recordFanOutAttempt is RecordDeliveryAttempt for a delivery named by the attempt, on
// PostgreSQL, in two statements instead of five (it runs once per attempt, and the
// records of one event's deliveries queue on its row): the first locks the event and
// writes the attempt, the delivery's status and the endpoint's health times (when more
// than a second stale: a healthy endpoint's attempts rarely write its health row), and
// reads the health row for the webhook domain; the second summarises the event. The
// summary must be a statement of its own: a statement's snapshot is taken when it
// begins, before the lock it waits for, so only a statement begun after the lock sees
// what the sibling records it waited for committed (READ COMMITTED).
func recordFanOutAttempt(tx *gorm.DB, env Env, a *models.DeliveryAttempt, ch AttemptChange, now time.Time) (AttemptRecord, error) {
	args := recordFanOutArgs(tx.Statement.Context, env, a, ch, now)
	var got struct {
		Events         int64
		DeliveryExists bool
		EndpointID     string
		EventType      string
		MaxAttempts    int
		Written        bool
		Ordered        bool
		ObjectID       string
		models.EndpointHealth
		HealthFound bool
	}
	if err := tx.Raw(recordFanOutSQL(), args).Scan(&got).Error; err != nil {
		return AttemptRecord{}, fmt.Errorf("record delivery attempt of %s: %w", a.EventID, err)
	}
	switch {
	case !got.DeliveryExists:
		return AttemptRecord{}, fmt.Errorf("delivery %s: %w", a.DeliveryID, apperr.ErrNotFound)
	case got.Events == 0:
		return AttemptRecord{}, fmt.Errorf("event %s: %w", a.EventID, apperr.ErrNotFound)
	}
	a.EndpointID = got.EndpointID
	rec := AttemptRecord{EndpointID: got.EndpointID, EventType: got.EventType, Written: got.Written,
		MaxAttempts: got.MaxAttempts, HealthFound: got.HealthFound, Ordered: got.Ordered, ObjectID: got.ObjectID}
	if got.HealthFound {
		rec.Health = got.EndpointHealth
		rec.Health.EndpointID = got.EndpointID
	}
	return rec, summarizeEvent(tx, a.EventID, now)
}

// recordFanOutSQL locks the delivery's lane (CONTRACT §26: its object's sequence row,
// when the delivery is ordered) and then the event (ev) before it touches the delivery
// (d): every change of a delivery locks its event first (lockEvents), and a lane comes
// before any event. The attempt's endpoint is the
// delivery's; ON CONFLICT keeps a retried write of one attempt from doubling it, and the
// delivery's status is set only with a new attempt: the write that stored it set it
// then, and since a replay may have put the delivery back to pending. The status and
// error set, what a delivery whose endpoint is gone ends as (unlessEndpointGone) and
// which ended delivery stays as it is are the webhook domain's AttemptChange, as
// parameters (recordShaped: an update of another shape goes step by step). When
// the event or the delivery is missing the attempt is written with no endpoint, and
// rolled back with the ErrNotFound the caller returns. The update of the delivery is
// checked again on its latest version when it changed after the statement began (a page
// of its endpoint's deletion, committed while this waited for the event), so a delivery
// ended by that deletion stays so. health_times moves the endpoint's health times
// forward only when stale (healthTimesSQL), after the event's lock (lock order: event,
// then health row); h is the row as the statement's snapshot shows it, which the webhook
// domain reads to decide whether the attempt changes anything else (store.AttemptRecord).
var recordFanOutSQL = sync.OnceValue(func() string {
	cols, vals := attemptInsertLists()
	return `WITH lane AS MATERIALIZED (
	SELECT s.object_id FROM object_sequences s
	JOIN webhook_deliveries l ON l.environment_id = s.environment_id AND l.object_id = s.object_id
	WHERE l.id = @delivery AND l.environment_id = @env AND l.ordered FOR UPDATE OF s
), ev AS MATERIALIZED (
	SELECT id, type FROM events WHERE id = @event AND (SELECT count(*) FROM lane) >= 0 -- the lane first (CONTRACT §26)
	FOR UPDATE
), d AS MATERIALIZED (
	SELECT id, endpoint_id, retry_maximum_attempts, ordered, object_id FROM webhook_deliveries
	WHERE id = @delivery AND event_id = (SELECT id FROM ev) AND environment_id = @env
), attempt AS (
	INSERT INTO delivery_attempts (` + cols + `)
	VALUES (` + vals + `)
	ON CONFLICT DO NOTHING
	RETURNING 1
), delivery AS (
	UPDATE webhook_deliveries w SET status = ` + unlessEndpointGone("w", "@status", "@gone_status") + `,
	last_error = ` + unlessEndpointGone("w", "@last_error", "@gone_error") + `, updated_at = @now
	FROM d WHERE w.id = d.id AND EXISTS (SELECT 1 FROM attempt)
	AND NOT (w.status = @keep_status AND w.last_error = @keep_error)
), ` + statRollupCTE() + `, health_times AS (
	` + healthTimesSQL + ` AND h.endpoint_id = (SELECT endpoint_id FROM d) AND EXISTS (SELECT 1 FROM attempt)
	AND (SELECT count(*) FROM rollup) >= 0 -- the rollup's row first: one lock order, rollup then health
), h AS (
	SELECT * FROM endpoint_health WHERE endpoint_id = (SELECT endpoint_id FROM d)
)
SELECT (SELECT count(*) FROM ev) AS events,
	EXISTS (SELECT 1 FROM webhook_deliveries WHERE id = @delivery AND event_id = @event AND environment_id = @env) AS delivery_exists,
	COALESCE((SELECT endpoint_id FROM d), '') AS endpoint_id,
	COALESCE((SELECT type FROM ev), '') AS event_type,
	COALESCE((SELECT retry_maximum_attempts FROM d), 0) AS max_attempts,
	EXISTS (SELECT 1 FROM attempt) AS written,
	COALESCE((SELECT ordered FROM d), FALSE) AS ordered,
	COALESCE((SELECT object_id FROM d), '') AS object_id,
	` + healthColumns("h") + `, h.endpoint_id IS NOT NULL AS health_found
FROM (SELECT 1) AS one LEFT JOIN h ON TRUE`
})

// attemptInsertLists are the column and value lists of an attempt's INSERT, from its
// model (a column added to it is written too); values are named parameters att_<column>,
// but for endpoint_id, the delivery's.
func attemptInsertLists() (cols, vals string) {
	var cs, vs []string
	for _, f := range attemptSchema().Fields {
		if f.DBName == "" {
			continue
		}
		cs = append(cs, f.DBName)
		if f.DBName == "endpoint_id" {
			vs = append(vs, "COALESCE((SELECT endpoint_id FROM d), '')")
		} else {
			vs = append(vs, "@att_"+f.DBName)
		}
	}
	return strings.Join(cs, ", "), strings.Join(vs, ", ")
}

// recordFanOutArgs are the named parameters of recordFanOutSQL.
func recordFanOutArgs(ctx context.Context, env Env, a *models.DeliveryAttempt, ch AttemptChange, now time.Time) map[string]any {
	u := ch.Delivery
	args := map[string]any{
		"event": a.EventID, "delivery": a.DeliveryID, "env": env.ID,
		"status": u.Status, "last_error": u.LastError, "now": now,
		"gone_status": u.IfGone.Status, "gone_error": u.IfGone.Error, "keep_status": u.Keep.Status, "keep_error": u.Keep.Error,
		"attempt_at": a.StartedAt, "succeeded": a.Outcome == models.AttemptSucceeded,
		"stale": a.StartedAt.Add(-healthTimesSlack), "counts": ch.CountsForHealth,
	}
	maps.Copy(args, statArgs(a)) // the rollup's (statRollupCTE)
	rv := reflect.ValueOf(a).Elem()
	for _, f := range attemptSchema().Fields {
		if f.DBName == "" {
			continue
		}
		v, _ := f.ValueOf(ctx, rv)
		args["att_"+f.DBName] = v
	}
	return args
}

var attemptSchema = sync.OnceValue(func() *schema.Schema { return modelSchema(&models.DeliveryAttempt{}) })
