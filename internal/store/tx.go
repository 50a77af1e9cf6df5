package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/models"
)

// Tx is the store inside one write transaction, scoped to one environment as Store
// scopes its queries (scope), or to one organization (OrgScope). Every write a request
// or a domain decision makes is a domain function that gets one from InTx and reads top
// to bottom through it: lock, decide, save, emit, keep the answer. Whatever it wrote
// commits or rolls back as one. Meter work (a consumer step, a backfill page) is verbs
// of the same Tx once it holds the environment's usage cursor (LockUsageCursor).
type Tx struct {
	db      *gorm.DB
	dialect string
	env     Env
	at      time.Time
	emits   []Emit
	figures *figureCache // the process's caches of meter work, kept as of the commit
	fired   *firedCache
	meter   *meterWork // the usage cursor's work (LockUsageCursor); nil: not held
	// Besides its events, what the transaction hands to AfterCommit once committed: the
	// events its replays marked for redispatch (once each, as last marked) and the jobs
	// whose rows it wrote.
	replayed []models.Event
	jobs     []Job
	paces    []Pace // endpoints whose pace changed (CONTRACT §27)
}

// InTx runs fn in one transaction in env: an environment, an organization's own rows
// (OrgScope) or, before anyone is known, no tenant's (Unauthenticated). It is the one
// kind of transaction of the writes requests, domain decisions and meter work make.
// fn's error rolls everything back and is returned as is. The events fn emitted are
// written when fn returns, before the commit (the outbox: they commit with the change or
// not at all), as the fan-out decides them (FanOut), and returned once committed. Right
// after the commit, the events written, those replayed and the jobs recorded go to
// AfterCommit, which starts them: whoever calls InTx, its events start the same way and
// as soon (issue 42). The events carry the trace of the caller (the API request), so
// that their deliveries show in the trace as its children, not the transaction's.
func (s *Store) InTx(ctx context.Context, env Env, fn func(tx *Tx) error) (events []models.Event, err error) {
	caller := tracing.TraceParent(ctx)
	spanCtx, end := s.span(ctx, "db change")
	defer end(&err)
	var tx *Tx
	err = s.db.WithContext(spanCtx).Transaction(func(db *gorm.DB) error {
		tx = &Tx{db: db, dialect: s.dialect, env: env, figures: s.figures, fired: s.fired}
		if err := fn(tx); err != nil {
			return err
		}
		if err := tx.beforeCommit(); err != nil {
			return err
		}
		var err error
		events, err = writeEvents(tx, s.seam.fanOutOf(), tx.emits, caller)
		return err
	})
	if err != nil {
		return nil, dbError(err) // fn's raw statements bypass GORM's translation
	}
	tx.committed()
	s.seam.handOver(ctx, tx.toStart(events))
	return events, nil
}

// beforeCommit completes the transaction's work before its events are written: the
// meter work's count of figure writes, and the environment's name and organization
// when the transaction knows its environment by id alone (a consumer step, a backfill
// page) and emitted events, which carry them.
func (tx *Tx) beforeCommit() error {
	if tx.meter != nil {
		if err := tx.meter.finish(tx); err != nil {
			return err
		}
	}
	if len(tx.emits) == 0 || tx.env.Name != "" {
		return nil
	}
	var e models.Environment
	if err := tx.db.Where("id = ?", tx.env.ID).Take(&e).Error; err != nil {
		return notFound(err, "environment "+tx.env.ID)
	}
	tx.env = Env{OrganizationID: e.OrganizationID, ID: e.ID, Name: e.Name}
	return nil
}

// committed keeps, once the transaction committed, what its meter work leaves to the
// process's caches (commit-time state: a rolled back transaction leaves nothing).
func (tx *Tx) committed() {
	if tx.meter != nil {
		tx.meter.committed(tx)
	}
}

// toStart is what the transaction hands to AfterCommit: its events written, then
// those its replays marked, and its jobs.
func (tx *Tx) toStart(written []models.Event) Committed {
	c := Committed{Events: startable(written), Jobs: tx.jobs, Paces: tx.paces}
	if len(tx.replayed) > 0 {
		c.Events = append(append(make([]models.Event, 0, len(c.Events)+len(tx.replayed)), c.Events...), tx.replayed...)
	}
	return c
}

// startable are the events written that have something to start: not those whose
// deliveries all wait in their order lanes (CONTRACT §26), which the fan-out marked
// dispatched (their release reaches their workflow).
func startable(written []models.Event) []models.Event {
	for i, ev := range written {
		if ev.DispatchedAt == nil {
			continue
		}
		out := append(make([]models.Event, 0, len(written)), written[:i]...)
		for _, e := range written[i+1:] {
			if e.DispatchedAt == nil {
				out = append(out, e)
			}
		}
		return out
	}
	return written
}

// handOver records an event a replay marked for redispatch, once: a later mark of the
// same event in the transaction replaces the earlier one.
func (tx *Tx) handOver(ev models.Event) {
	for i := range tx.replayed {
		if tx.replayed[i].ID == ev.ID {
			tx.replayed[i] = ev
			return
		}
	}
	tx.replayed = append(tx.replayed, ev)
}

// Now is the time of the change: every updated_at it saves and every event it writes
// shows it. It is fixed at its first call, which in a function that locks first comes
// after the locks, so that changes serialised by a row lock are stamped in lock order.
func (tx *Tx) Now() time.Time {
	if tx.at.IsZero() {
		tx.at = changeTime()
	}
	return tx.at
}

// Savepoint runs fn in a savepoint of the transaction, through a Tx of its own: fn's
// error undoes what fn did, its row locks included, and is returned while the
// transaction goes on (a bulk replay page counts a refused event and does not keep it
// locked until the page commits). fn's change time is its own, taken after its locks
// (Now); the events it emits join the transaction's when it succeeds. Meter work stays
// the transaction's: its verbs refuse a savepoint's Tx (errNoCursor), whose figures a
// rollback to the savepoint would leave in the caches.
func (tx *Tx) Savepoint(fn func(tx *Tx) error) error {
	return tx.db.Transaction(func(db *gorm.DB) error { // nested: SAVEPOINT … ROLLBACK TO
		sub := &Tx{db: db, dialect: tx.dialect, env: tx.env} // no meter work: its caches follow the commit
		if err := fn(sub); err != nil {
			return err
		}
		tx.emits = append(tx.emits, sub.emits...)
		tx.jobs = append(tx.jobs, sub.jobs...)
		for _, p := range sub.paces {
			tx.Repace(p.EndpointID, p.Rate)
		}
		for _, ev := range sub.replayed {
			tx.handOver(ev)
		}
		return nil
	})
}

// Emit adds events to the change, in order. InTx writes all of them in one batch (one
// insert of events and their deliveries, numbered 1..n within the change) when the
// function returns. e.Object is encoded then: pass a snapshot value, not something the
// function still changes.
func (tx *Tx) Emit(e ...Emit) { tx.emits = append(tx.emits, e...) }

// lockRow loads the row id of T in the transaction's environment FOR UPDATE (SQLite's
// single connection serialises instead); what names it in the not-found error.
func lockRow[T any](tx *Tx, what, id string) (T, error) {
	return takeRow[T](scope(tx.db, tx.env).Clauses(clause.Locking{Strength: "UPDATE"}), what+" "+id, "id = ?", id)
}

// takeRow reads the one row of T that where selects in db; apperr.ErrNotFound, naming
// what, when there is none.
func takeRow[T any](db *gorm.DB, what, where string, args ...any) (T, error) {
	var row T
	if err := db.Where(where, args...).Take(&row).Error; err != nil {
		return row, notFound(err, what)
	}
	return row, nil
}

// saveRow writes every column of the existing row id (scoped: a row of another
// environment is never touched) but its identity and creation time. UpdateColumns, not
// Updates: GORM would otherwise stamp updated_at with its own clock, and the stored time
// would differ from the one the response and events show.
func saveRow[T any](tx *Tx, what, id string, row *T) error {
	res := scope(tx.db.Model(new(T)), tx.env).Where("id = ?", id).Select("*").Omit("id", "organization_id", "environment_id", "created_at").UpdateColumns(row)
	if res.Error != nil {
		return fmt.Errorf("save %s %s: %w", what, id, res.Error)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("save %s %s: %d rows updated", what, id, res.RowsAffected)
	}
	return nil
}
