package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// ErrClaimsUnsupported: the database cannot claim events (SQLite has no SKIP LOCKED; the
// one process that uses it starts its events itself, CONTRACT §22).
var ErrClaimsUnsupported = errors.New("outbox claims need PostgreSQL")

// OutboxChannel is the channel of the notification that wakes the processes that claim
// starts (CONTRACT §22): sent after commit by processes that do not start runs.
const OutboxChannel = "revops_outbox"

// ClaimsStarts tells whether this database can hand events to claimers (PostgreSQL).
func (s *Store) ClaimsStarts() bool { return s.dialect == "postgres" }

// Started is a claimed event whose run the claimer started (RunID) or found started
// already by someone else (RunID ""): it is marked dispatched in the claim's transaction.
type Started struct {
	EventID, WorkflowID, RunID string
}

// StartClaim is one batch of events owed a start, locked for the claimer until it returns.
type StartClaim struct {
	Events []models.Event // each with its Fanout as the database has it now
	// Next is the environment to resume the round robin after.
	Next string
	// More says that events may be left: an environment gave its whole share, or as many
	// environments had events as one claim takes.
	More bool
}

// ClaimStarts takes up to limit events still owed a start, round robin by environment:
// up to envs environments with such events after `after` in id order (wrapping around),
// then each one's oldest, at most limit/environments each, under FOR UPDATE SKIP LOCKED,
// so that claimers of any number of processes never take the same event. start starts
// their runs while the rows stay locked; those it returns are marked dispatched in the
// same transaction (the claim takes the place of a MarkDispatched per event), the others
// are left to the next claim. A claimer that dies mid-claim loses nothing: its
// transaction rolls back, and the next claim finds the events again (their starts are
// idempotent: the workflow id is the event's).
func (s *Store) ClaimStarts(ctx context.Context, after string, envs, limit int, start func(context.Context, []models.Event) []Started) (StartClaim, error) {
	if !s.ClaimsStarts() {
		return StartClaim{}, ErrClaimsUnsupported
	}
	var c StartClaim
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ids, err := claimEnvironments(tx, after, envs)
		if err != nil || len(ids) == 0 {
			return err
		}
		c.Next = ids[len(ids)-1]
		per := max(1, limit/len(ids))
		if err := tx.Raw(`SELECT ev.* FROM unnest(?::text[]) AS envs(id) CROSS JOIN LATERAL (
	SELECT * FROM events e WHERE e.environment_id = envs.id AND e.dispatched_at IS NULL
	ORDER BY e.created_at, e.seq LIMIT ? FOR UPDATE SKIP LOCKED) ev`, textArray(ids), per).Scan(&c.Events).Error; err != nil {
			return fmt.Errorf("claim events: %w", err)
		}
		if len(c.Events) == 0 {
			return nil
		}
		c.More = len(ids) == envs || fullShare(c.Events, per)
		if err := attachFanouts(tx, c.Events); err != nil {
			return err
		}
		return markStarted(tx, start(ctx, c.Events), time.Now().UTC())
	})
	return c, err
}

// fullShare tells whether an environment gave per events, its whole share of the claim.
func fullShare(events []models.Event, per int) bool {
	n := map[string]int{}
	for _, e := range events {
		n[e.EnvironmentID]++
		if n[e.EnvironmentID] == per {
			return true
		}
	}
	return false
}

// claimEnvironments are up to n environments with events owed a start, in id order after
// `after`, then from the first: each found by one probe of events_env_undispatched (a
// skip scan), however many events wait.
func claimEnvironments(tx *gorm.DB, after string, n int) ([]string, error) {
	ids, err := environmentsAfter(tx, after, n)
	if err != nil || len(ids) == n || after == "" {
		return ids, err
	}
	more, err := environmentsAfter(tx, "", n-len(ids))
	for _, id := range more {
		if id > after { // found by the first probe already
			break
		}
		ids = append(ids, id)
	}
	return ids, err
}

func environmentsAfter(tx *gorm.DB, after string, n int) ([]string, error) {
	var ids []string
	err := tx.Raw(`WITH RECURSIVE envs(id) AS (
	(SELECT environment_id FROM events WHERE dispatched_at IS NULL AND environment_id > ? ORDER BY environment_id LIMIT 1)
	UNION ALL
	SELECT (SELECT environment_id FROM events WHERE dispatched_at IS NULL AND environment_id > envs.id ORDER BY environment_id LIMIT 1)
	FROM envs WHERE envs.id IS NOT NULL
) SELECT id FROM envs WHERE id IS NOT NULL LIMIT ?`, after, n).Scan(&ids).Error
	if err != nil {
		return nil, fmt.Errorf("environments with events to start: %w", err)
	}
	return ids, nil
}

// attachFanouts gives each event its deliveries and their endpoints as configured now,
// in two queries for the whole claim.
func attachFanouts(tx *gorm.DB, events []models.Event) error {
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	var ds []models.WebhookDelivery
	if err := tx.Where("event_id IN ?", ids).Order("created_at, id").Find(&ds).Error; err != nil {
		return fmt.Errorf("deliveries of claimed events: %w", err)
	}
	endpoints := map[string]models.WebhookEndpoint{}
	if len(ds) > 0 {
		epIDs := make([]string, 0, len(ds))
		for _, d := range ds {
			epIDs = append(epIDs, d.EndpointID)
		}
		var eps []models.WebhookEndpoint
		if err := tx.Where("id IN ?", epIDs).Find(&eps).Error; err != nil {
			return fmt.Errorf("endpoints of claimed events: %w", err)
		}
		for _, ep := range eps {
			endpoints[ep.ID] = ep
		}
	}
	byEvent := make(map[string]*models.Fanout, len(events))
	for i := range events {
		events[i].Fanout = &models.Fanout{}
		byEvent[events[i].ID] = events[i].Fanout
	}
	for _, d := range ds {
		ep, ok := endpoints[d.EndpointID]
		if !ok {
			ep = models.WebhookEndpoint{ID: d.EndpointID} // deleted since: named by id only
		}
		f := byEvent[d.EventID]
		f.Deliveries = append(f.Deliveries, d)
		f.Destinations = append(f.Destinations, models.DestinationOf(ep))
	}
	return nil
}

// markStarted marks the started events dispatched, in one statement.
func markStarted(tx *gorm.DB, started []Started, at time.Time) error {
	if len(started) == 0 {
		return nil
	}
	var rows strings.Builder
	args := make([]any, 0, 1+3*len(started))
	args = append(args, at)
	for i, s := range started {
		if i > 0 {
			rows.WriteString(", ")
		}
		rows.WriteString("(?, ?, ?)")
		args = append(args, s.EventID, s.WorkflowID, s.RunID)
	}
	// A run id "" (started by someone else) keeps the run id stored, as MarkDispatched does.
	err := tx.Exec(`UPDATE events AS e SET dispatched_at = ?, workflow_id = v.wf,
	run_id = CASE WHEN v.run = '' THEN e.run_id ELSE v.run END
FROM (VALUES `+rows.String()+`) AS v(id, wf, run) WHERE e.id = v.id`, args...).Error
	if err != nil {
		return fmt.Errorf("mark claimed events dispatched: %w", err)
	}
	return nil
}

// textArray is ids as a PostgreSQL text[] literal's parameter.
func textArray(ids []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(id))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// NotifyOutbox wakes the claimers of every process (LISTEN OutboxChannel). Send it after
// commit, never inside a change's transaction: a NOTIFY there would serialize the
// commits of the whole cluster on its queue lock.
func (s *Store) NotifyOutbox(ctx context.Context) error {
	if !s.ClaimsStarts() {
		return ErrClaimsUnsupported
	}
	if err := s.db.WithContext(ctx).Exec("SELECT pg_notify(?, '')", OutboxChannel).Error; err != nil {
		return fmt.Errorf("notify outbox: %w", err)
	}
	return nil
}

// ListenOutbox calls wake at every outbox notification until ctx ends, on a connection
// of its own (LISTEN holds one); after a lost connection it reconnects every retry, and
// calls wake once connected again, since notifications sent meanwhile are lost.
func (s *Store) ListenOutbox(ctx context.Context, retry time.Duration, wake func()) error {
	if !s.ClaimsStarts() {
		return ErrClaimsUnsupported
	}
	for ctx.Err() == nil {
		err := s.listen(ctx, wake)
		if ctx.Err() != nil {
			break
		}
		_ = err // the claimer's poll covers the gap; the next try tells again
		select {
		case <-ctx.Done():
		case <-time.After(retry):
		}
	}
	return nil
}

func (s *Store) listen(ctx context.Context, wake func()) error {
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return fmt.Errorf("connect to listen: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+OutboxChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	wake()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		wake()
	}
}
