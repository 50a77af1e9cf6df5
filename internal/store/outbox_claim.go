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

// ErrClaimsUnsupported: the database cannot claim events (SQLite has no advisory locks nor
// LISTEN; the one process that uses it starts its events itself, CONTRACT §22).
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

// StartQuery is what one claim takes: up to Envs environments with events owed a start,
// the first after After in id order and on round to the first ones, sharing Limit
// events; never the events of Held (starts the claimer set aside after they failed, at
// most MaxHeld are named: one parameter, an array).
type StartQuery struct {
	After       string
	Envs, Limit int
	Held        []string
}

// MaxHeld bounds the events a claim is told to leave: each row the statement reads is
// compared with each of them (a parameter, not a constant: no hashed lookup under a
// generic plan), so the claimer names those set aside for longest, and skips any other
// held event a claim returns.
const MaxHeld = 64

// StartClaim is one batch of events owed a start, locked for the claimer until it returns.
type StartClaim struct {
	// Events are in the round robin's order: environment by environment from the first
	// after After, round to the first ones; each environment's oldest first.
	Events []models.Event // each with its Fanout as the database has it now
	// Next is the environment to resume the round robin after: the last one taken when
	// the claim took as many as it could (more may follow), else the first one taken, so
	// that the next claim begins with the one after it rather than with the same one.
	Next string
	// More says that events may be left: an environment gave its whole share, or as many
	// environments had events as one claim takes.
	More bool
}

// ClaimStarts takes up to q.Limit events still owed a start, round robin by environment:
// up to q.Envs environments with such events, the first after q.After in id order, then
// on round to the first ones, and each one's oldest, at most Limit/environments each,
// each under a transaction-scoped advisory lock that other claimers skip, so that
// claimers of any number of processes do not take the same event; the events of q.Held
// are left. start starts their runs while the claim holds them; those it returns are
// marked dispatched in the same transaction (the claim takes the place of a
// MarkDispatched per event), the others are left to the next claim. A claimer that dies
// mid-claim loses nothing: its transaction rolls back, and the next claim finds the
// events again (their starts are idempotent: the workflow id is the event's). One
// statement claims, one reads the deliveries and their endpoints, and the mark locks,
// then updates.
func (s *Store) ClaimStarts(ctx context.Context, q StartQuery, start func(context.Context, []models.Event) []Started) (StartClaim, error) {
	if !s.ClaimsStarts() {
		return StartClaim{}, ErrClaimsUnsupported
	}
	var c StartClaim
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// A claimer whose host vanished mid-claim must not keep its events from the others
		// until TCP notices: its transaction ends after 30 s idle (starts time out at 5 s).
		if err := tx.Exec("SET LOCAL idle_in_transaction_session_timeout = '30s'").Error; err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		rows, err := claimEvents(ctx, tx, q)
		if err != nil {
			return err
		}
		c = claimOf(rows, q)
		if len(c.Events) == 0 {
			return nil
		}
		if err := attachFanouts(tx, c.Events); err != nil {
			return err
		}
		return s.markStarted(tx, start(ctx, c.Events), time.Now().UTC())
	})
	return c, err
}

// claimEvents runs claimSQL for q: through the connection, so that each parameter is
// sent once (the held events are one text[]), whatever the times the statement names it.
func claimEvents(ctx context.Context, tx *gorm.DB, q StartQuery) ([]claimedEvent, error) {
	held := q.Held[:min(len(q.Held), MaxHeld)]
	if held == nil {
		held = []string{}
	}
	rs, err := tx.Statement.ConnPool.QueryContext(ctx, claimSQL, q.After, q.Envs, q.Limit, held)
	if err != nil {
		return nil, fmt.Errorf("claim events: %w", err)
	}
	defer rs.Close()
	var rows []claimedEvent
	for rs.Next() {
		var r claimedEvent
		if err := tx.ScanRows(rs, &r); err != nil {
			return nil, fmt.Errorf("claim events: %w", err)
		}
		rows = append(rows, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("claim events: %w", err)
	}
	return rows, nil
}

// claimSQL claims events ($1 after, $2 environments, $3 events, $4 held events). The environments are found by skip scans of
// events_env_undispatched (one index probe each, however many events wait): those after
// @after, then, when they are fewer than @envs, those up to it from the first (lap 1).
// Each gives its share. An event is taken with a transaction-scoped advisory lock, not a
// row lock: the runs the claim starts record their first attempt (which locks the event
// row) while the claim is still open, and must not wait for it; another claimer skips the
// event all the same. Each row carries how many environments the claim took, its first
// and its last.
const claimSQL = `WITH RECURSIVE ahead(id) AS (
	(SELECT environment_id FROM events WHERE dispatched_at IS NULL AND environment_id > $1 AND id <> ALL($4::text[])
		ORDER BY environment_id LIMIT 1)
	UNION ALL
	SELECT (SELECT environment_id FROM events WHERE dispatched_at IS NULL AND environment_id > ahead.id AND id <> ALL($4::text[])
		ORDER BY environment_id LIMIT 1)
	FROM ahead WHERE ahead.id IS NOT NULL
), behind(id) AS (
	(SELECT environment_id FROM events WHERE dispatched_at IS NULL AND environment_id <= $1 AND id <> ALL($4::text[])
		ORDER BY environment_id LIMIT 1)
	UNION ALL
	SELECT (SELECT environment_id FROM events WHERE dispatched_at IS NULL AND environment_id > behind.id AND environment_id <= $1
		AND id <> ALL($4::text[]) ORDER BY environment_id LIMIT 1)
	FROM behind WHERE behind.id IS NOT NULL
), first_lap AS (SELECT id FROM ahead WHERE id IS NOT NULL LIMIT $2),
picked AS (
	SELECT id, 0 AS lap FROM first_lap
	UNION ALL
	(SELECT id, 1 FROM behind WHERE id IS NOT NULL LIMIT GREATEST(0, $2 - (SELECT count(*) FROM first_lap)))
)
SELECT ev.*, picked.lap AS claim_lap, (SELECT count(*) FROM picked) AS claim_envs,
	(SELECT id FROM picked ORDER BY lap, id LIMIT 1) AS claim_first,
	(SELECT id FROM picked ORDER BY lap DESC, id DESC LIMIT 1) AS claim_last
FROM picked CROSS JOIN LATERAL (
	SELECT * FROM events e WHERE e.environment_id = picked.id AND e.dispatched_at IS NULL AND e.id <> ALL($4::text[])
	AND pg_try_advisory_xact_lock(hashtextextended('revops-start:' || e.id, 0))
	ORDER BY e.created_at, e.seq LIMIT GREATEST(1, $3 / (SELECT count(*) FROM picked))) ev
ORDER BY picked.lap, ev.environment_id, ev.created_at, ev.seq`

// claimedEvent is a row of claimSQL.
type claimedEvent struct {
	models.Event          `gorm:"embedded"`
	ClaimLap, ClaimEnvs   int
	ClaimFirst, ClaimLast string
}

// claimOf is the claim of rows (in the round robin's order) for q: where the round robin
// goes on after it, and whether events may be left.
func claimOf(rows []claimedEvent, q StartQuery) StartClaim {
	if len(rows) == 0 { // nothing to take, or every event taken by other claimers
		return StartClaim{Next: q.After}
	}
	c := StartClaim{Events: make([]models.Event, len(rows))}
	n := map[string]int{}
	for i, r := range rows {
		c.Events[i] = r.Event
		n[r.EnvironmentID]++
	}
	share := max(1, q.Limit/rows[0].ClaimEnvs)
	for _, k := range n {
		c.More = c.More || k >= share
	}
	if rows[0].ClaimEnvs >= q.Envs {
		c.Next, c.More = rows[0].ClaimLast, true
	} else {
		c.Next = rows[0].ClaimFirst
	}
	return c
}

// attachFanouts gives each event its deliveries and their endpoints as configured now,
// in one query for the whole claim.
func attachFanouts(tx *gorm.DB, events []models.Event) error {
	ids := make([]string, len(events))
	byEvent := make(map[string]*models.Fanout, len(events))
	for i := range events {
		ids[i] = events[i].ID
		events[i].Fanout = &models.Fanout{}
		byEvent[events[i].ID] = events[i].Fanout
	}
	var rows []struct {
		models.WebhookDelivery `gorm:"embedded"`
		EpURL                  *string
		EpMethod               *string
		EpEnabled              *bool
		EpRateLimit            *int
		EpRatePeriod           *string
	}
	if err := tx.Raw(`SELECT d.*, ep.url AS ep_url, ep.method AS ep_method, ep.enabled AS ep_enabled,
	ep.rate_limit AS ep_rate_limit, ep.rate_period AS ep_rate_period
FROM webhook_deliveries d LEFT JOIN webhook_endpoints ep ON ep.id = d.endpoint_id
WHERE d.event_id IN ? ORDER BY d.created_at, d.id`, ids).Scan(&rows).Error; err != nil {
		return fmt.Errorf("deliveries of claimed events: %w", err)
	}
	for _, r := range rows {
		dest := models.Destination{EndpointID: r.EndpointID} // deleted since: named by id only
		if r.EpURL != nil {
			dest.URL, dest.Method, dest.Enabled = *r.EpURL, *r.EpMethod, *r.EpEnabled
			if r.EpRateLimit != nil && r.EpRatePeriod != nil {
				dest.Pace = models.WebhookEndpoint{RateLimit: *r.EpRateLimit, RatePeriod: *r.EpRatePeriod}.PacedRate()
			}
		}
		f := byEvent[r.EventID]
		f.Deliveries = append(f.Deliveries, r.WebhookDelivery)
		f.Destinations = append(f.Destinations, dest)
	}
	return nil
}

// markStarted marks the started events dispatched, in one statement, once their rows are
// locked in id order as every writer of several events locks them (lockEvents).
func (s *Store) markStarted(tx *gorm.DB, started []Started, at time.Time) error {
	if len(started) == 0 {
		return nil
	}
	ids := make([]string, len(started))
	rows := make([]string, len(started))
	args := make([]any, 0, 1+3*len(started))
	args = append(args, at)
	for i, st := range started {
		ids[i], rows[i] = st.EventID, "(?, ?, ?)"
		args = append(args, st.EventID, st.WorkflowID, st.RunID)
	}
	if err := s.lockEvents(tx, ids...); err != nil {
		return err
	}
	// A run id "" (started by someone else) keeps the run id stored, as MarkDispatched does.
	err := tx.Exec(`UPDATE events AS e SET dispatched_at = ?, workflow_id = v.wf,
	run_id = CASE WHEN v.run = '' THEN e.run_id ELSE v.run END
FROM (VALUES `+strings.Join(rows, ", ")+`) AS v(id, wf, run) WHERE e.id = v.id`, args...).Error
	if err != nil {
		return fmt.Errorf("mark claimed events dispatched: %w", err)
	}
	return nil
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

// ListenOutbox calls wake once listening, then at every outbox notification, until ctx
// ends or the connection fails (it returns why). It holds a connection of its own, outside
// both pools: LISTEN needs a session (through PgBouncer, its session mode).
func (s *Store) ListenOutbox(ctx context.Context, wake func()) error {
	if !s.ClaimsStarts() {
		return ErrClaimsUnsupported
	}
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return fmt.Errorf("connect to listen: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+OutboxChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	wake() // notifications sent before this one are lost: look now
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		wake()
	}
}
