package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/models"
)

func init() {
	register(migration{version: 22, name: "events", sql: `
CREATE TABLE events (
	id TEXT PRIMARY KEY,
	organization_id TEXT NOT NULL REFERENCES organizations(id),
	environment_id TEXT NOT NULL REFERENCES environments(id),
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
CREATE INDEX events_env_object ON events (environment_id, object_id, created_at, seq)`})
}

// Emit is an event a change asks for: its type and the snapshot of the object after the
// change, which becomes the webhook body under the key ObjectType ("deal" or "account").
type Emit struct {
	Type       string
	ObjectType string
	ObjectID   string
	Object     any
}

// webhookEvent is the "event" member of a webhook body (CONTRACT §8).
type webhookEvent struct {
	ID   string `json:"id"`
	Time string `json:"time"`
	Type string `json:"type"`
}

// writeEvents inserts the events of one change inside its transaction (the outbox), in
// the order given, and returns the rows written.
func writeEvents(tx *gorm.DB, env Env, now time.Time, emits []Emit) ([]models.Event, error) {
	events := make([]models.Event, 0, len(emits))
	for i, e := range emits {
		ev := models.Event{
			ID: uuid.NewString(), OrganizationID: env.OrganizationID, EnvironmentID: env.ID,
			Environment: env.Name, Type: e.Type, ObjectType: e.ObjectType, ObjectID: e.ObjectID,
			Time: strconv.FormatInt(now.Unix(), 10), Status: models.EventPending, Seq: int64(i + 1),
			CreatedAt: now, UpdatedAt: now,
		}
		payload, err := webhookBody(ev, e.Object)
		if err != nil {
			return nil, err
		}
		ev.Payload = payload
		events = append(events, ev)
	}
	if len(events) == 0 {
		return nil, nil
	}
	if err := tx.Create(&events).Error; err != nil {
		return nil, fmt.Errorf("write events: %w", err)
	}
	return events, nil
}

// webhookBody is {"event":{id,time,type},"<object type>":{…}}, event first.
func webhookBody(ev models.Event, object any) (string, error) {
	head, err := json.Marshal(webhookEvent{ID: ev.ID, Time: ev.Time, Type: ev.Type})
	if err != nil {
		return "", fmt.Errorf("encode event: %w", err)
	}
	obj, err := json.Marshal(object)
	if err != nil {
		return "", fmt.Errorf("encode %s snapshot: %w", ev.ObjectType, err)
	}
	key, err := json.Marshal(ev.ObjectType)
	if err != nil {
		return "", fmt.Errorf("encode object key: %w", err)
	}
	return `{"event":` + string(head) + `,` + string(key) + `:` + string(obj) + `}`, nil
}

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

// RecordDelivery writes one delivery attempt and its event's resulting status in one
// transaction, so that an attempt is never recorded without its status nor the reverse.
// The attempt's id is set by the caller before a retried write: a write whose commit
// succeeded but whose answer was lost is then not recorded twice.
func (s *Store) RecordDelivery(ctx context.Context, env Env, a *models.DeliveryAttempt, status string) error {
	if a.ID == "" {
		a.ID = uuid.NewString()
	}
	a.EnvironmentID = env.ID
	if a.CreatedAt.IsZero() {
		a.CreatedAt = time.Now().UTC()
	}
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(a).Error; err != nil {
			return fmt.Errorf("record delivery attempt of %s: %w", a.EventID, err)
		}
		res := scope(tx, env).Model(&models.Event{}).Where("id = ?", a.EventID).
			Updates(map[string]any{"status": status, "updated_at": time.Now().UTC()})
		if res.Error != nil {
			return fmt.Errorf("set status of event %s: %w", a.EventID, res.Error)
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("event %s: %w", a.EventID, apperr.ErrNotFound)
		}
		return nil
	})
}

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

// MarkDeliveryFailed sets the event failed if its delivery is still under way (pending or
// retrying): the delivery workflow calls it when its run ends without delivery, so that
// no event stays retrying after its run closed. A final status is left as it is. The id
// comes from the workflow input, as for EventByID.
func (s *Store) MarkDeliveryFailed(ctx context.Context, eventID string) error {
	res := s.db.WithContext(ctx).Model(&models.Event{}).
		Where("id = ? AND status IN ?", eventID, []string{models.EventPending, models.EventRetrying}).
		Updates(map[string]any{"status": models.EventFailed, "updated_at": time.Now().UTC()})
	if res.Error != nil {
		return fmt.Errorf("mark event %s failed: %w", eventID, res.Error)
	}
	return nil
}
