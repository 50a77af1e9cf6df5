package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 22, name: "events", sql: scopedTable("events", "id", `
	environment TEXT NOT NULL,
	type TEXT NOT NULL,
	object_type TEXT NOT NULL,
	object_id TEXT NOT NULL,
	time TEXT NOT NULL,
	payload TEXT NOT NULL,
	status TEXT NOT NULL,
	seq BIGINT NOT NULL,
	dispatched_at {{ts}},
	workflow_id TEXT NOT NULL DEFAULT '',
	run_id TEXT NOT NULL DEFAULT '',
	created_at {{ts}} NOT NULL,
	updated_at {{ts}} NOT NULL
);
CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;
CREATE INDEX events_env_created ON events (environment_id, created_at, id);
CREATE INDEX events_env_object ON events (environment_id, object_id, created_at, seq)`)})
	// The trace of the change that wrote an event travels with its row (the outbox), so
	// that its workflow start joins that trace whichever process makes it (CONTRACT §19);
	// an attempt keeps the trace it ran in. Empty: tracing was off. Adding a column with a
	// constant default changes only PostgreSQL's catalog.
	register(migration{version: 90, name: "trace_ids", sql: `
ALTER TABLE events ADD COLUMN trace_parent TEXT NOT NULL DEFAULT '';
ALTER TABLE delivery_attempts ADD COLUMN trace_id TEXT NOT NULL DEFAULT ''`})
	// A replay's own trace (its request's, or its bulk job's), which the redispatch of the
	// event continues, linked to the original (CONTRACT §19).
	register(migration{version: 91, name: "redispatch_trace", sql: `
ALTER TABLE events ADD COLUMN redispatch_trace_parent TEXT NOT NULL DEFAULT ''`})
}

// Emit is an event a change asks for: its type and the snapshot of the object after the
// change, which becomes the webhook body under the key ObjectType ("deal" or "account").
type Emit struct {
	// ID is the event's id when the change needs it before the event is written (a
	// meter alert's firings name their event); "" = a new one.
	ID         string
	Type       string
	ObjectType string
	ObjectID   string
	Object     any
	// More are members of the body after the object, in order (delivery-exhausted's
	// "delivery" and "suppressed", CONTRACT §23).
	More []BodyMember
}

// BodyMember is one more member of a webhook body.
type BodyMember struct {
	Key   string
	Value any
}

// writeEvents inserts the events of one change inside its transaction (the outbox), in
// the order given, with their deliveries (CONTRACT §13) as fan decides them, and returns
// the events written, each carrying traceParent: the trace its deliveries continue
// (CONTRACT §19). The store numbers and stamps the rows — each its object's next
// sequence (numberEvents, CONTRACT §26), before the fan-out, whose bodies carry it; their
// bodies, statuses and deliveries are the fan-out's.
func writeEvents(tx *Tx, fan FanOut, emits []Emit, traceParent string) ([]models.Event, error) {
	if len(emits) == 0 {
		return nil, nil
	}
	if fan == nil {
		return nil, ErrNoFanOut
	}
	now, env := tx.Now(), tx.env
	events := make([]models.Event, len(emits))
	for i, e := range emits {
		id := e.ID
		if id == "" {
			id = uuid.NewString()
		}
		events[i] = models.Event{
			ID: id, OrganizationID: env.OrganizationID, EnvironmentID: env.ID,
			Environment: env.Name, Type: e.Type, ObjectType: e.ObjectType, ObjectID: e.ObjectID,
			Time: strconv.FormatInt(now.Unix(), 10), Status: models.EventPending, Seq: int64(i + 1),
			TraceParent: traceParent, CreatedAt: now, UpdatedAt: now,
		}
	}
	if err := numberEvents(tx, events); err != nil {
		return nil, err
	}
	deliveries, err := fan.FanOut(tx, events, emits)
	if err != nil {
		return nil, err
	}
	if err := tx.db.CreateInBatches(&events, insertChunk).Error; err != nil {
		return nil, fmt.Errorf("write events: %w", err)
	}
	if len(deliveries) > 0 {
		if err := tx.db.CreateInBatches(&deliveries, insertChunk).Error; err != nil {
			return nil, fmt.Errorf("write deliveries: %w", err)
		}
	}
	return events, nil
}

// insertChunk bounds the rows of one INSERT of a change's events or deliveries (about
// twenty parameters each): a change may emit many events (a consumer step's
// meter-threshold-crossed, up to REVOPS_ALERT_EVENTS_PER_HOUR), each with a delivery per
// endpoint, and neither database takes a list of parameters that grows with them
// (PostgreSQL's bound is 65,535; CONTRACT §21).
const insertChunk = 500

// EventsForObject lists the events of one object, oldest first, in the order written.
func (s *Store) EventsForObject(ctx context.Context, env Env, objectID string) ([]models.Event, error) {
	var events []models.Event
	if err := s.in(ctx, env).Where("object_id = ?", objectID).Order("created_at, seq").Find(&events).Error; err != nil {
		return nil, fmt.Errorf("events of %s: %w", objectID, err)
	}
	return events, nil
}

// changeTime is the time of a change, at the database's precision (microseconds), so that what
// a response shows equals what a later read shows.
func changeTime() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// DeliveredInRun tells whether a run of the event's workflow has recorded a successful
// attempt: a later attempt of that run (its completion was lost, or came too late) must
// not send again. A new run (a replay) delivers anew, whatever the event's status says.
func (s *Store) DeliveredInRun(ctx context.Context, env Env, eventID, runID string) (bool, error) {
	var n int64
	err := s.in(ctx, env).Model(&models.DeliveryAttempt{}).
		Where("event_id = ? AND run_id = ? AND outcome = ?", eventID, runID, models.AttemptSucceeded).
		Count(&n).Error
	if err != nil {
		return false, fmt.Errorf("attempts of %s in run %s: %w", eventID, runID, err)
	}
	return n > 0, nil
}
