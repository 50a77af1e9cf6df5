package webhook

import (
	"context"
	"time"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// LaneCheckStore is what the minute check's lane sweeps need of the database.
type LaneCheckStore interface {
	Writer
	ExpiredWaits(ctx context.Context, before time.Time, limit int) ([]store.LaneDelivery, error)
	SilentReleased(ctx context.Context, before time.Time, limit int) ([]store.LaneDelivery, error)
	StuckLanes(ctx context.Context, limit int) ([]store.Lane, error)
}

var _ LaneCheckStore = (*store.Store)(nil)

// LanesChecked counts what one pass of the lane sweeps did.
type LanesChecked struct {
	Expired, Closed, Released int
}

// DefaultOrderMaxWait is REVOPS_WEBHOOK_ORDER_MAX_WAIT's default (CONTRACT §26).
const DefaultOrderMaxWait = 168 * time.Hour

// runClosedMargin is added to a delivery's retry schedule (and its attempts' timeouts)
// before its silence means its run closed.
const runClosedMargin = 15 * time.Minute

// attemptAllowance bounds one attempt's own time (its activity's timeout and the
// scheduling around it) in a silence's reckoning.
const attemptAllowance = 2 * time.Minute

// CheckLanes is one bounded pass of the minute check's lane sweeps (CONTRACT §26, §21):
// at most limit deliveries that have waited longer than maxWait end failed
// (order_wait_expired: no delivery-exhausted; the lane's order is unchanged, its head
// still runs); at most limit released deliveries silent for longer than their whole
// retry schedule end failed (run_closed) and release the next of their lanes; and at
// most limit lanes of enabled endpoints with waiting deliveries and none released (a
// re-enabled endpoint's lanes past its first page) release their next. Each in its own
// short transaction, under its lane.
func CheckLanes(ctx context.Context, st LaneCheckStore, now time.Time, maxWait time.Duration, limit int) (LanesChecked, error) {
	var out LanesChecked
	expired, err := st.ExpiredWaits(ctx, now.Add(-maxWait), limit)
	if err != nil {
		return out, err
	}
	for _, d := range expired {
		if err := endInLane(ctx, st, d, WaitExpired); err != nil {
			return out, err
		}
		out.Expired++
	}
	silent, err := st.SilentReleased(ctx, now.Add(-runClosedMargin), limit)
	if err != nil {
		return out, err
	}
	for _, d := range silent {
		if now.Sub(d.UpdatedAt) < silence(d.RetryPolicy) {
			continue
		}
		if err := endInLane(ctx, st, d, RunClosed); err != nil {
			return out, err
		}
		out.Closed++
	}
	lanes, err := st.StuckLanes(ctx, limit)
	if err != nil {
		return out, err
	}
	for _, l := range lanes {
		env := store.Env{OrganizationID: l.OrganizationID, ID: l.EnvironmentID, Name: l.Environment}
		if _, err := st.InTx(ctx, env, func(tx *store.Tx) error {
			if err := tx.LockLane(l.ObjectID); err != nil {
				return err
			}
			_, err := tx.ReleaseNext(l.EndpointID, l.ObjectID)
			return err
		}); err != nil {
			return out, err
		}
		out.Released++
	}
	return out, nil
}

// silence is how long a released delivery may stay unchanged while its run still works
// on it: its whole retry schedule, each attempt's own time, and a margin.
func silence(p models.RetryPolicy) time.Duration {
	p = p.Effective(0)
	return p.Schedule() + time.Duration(p.MaximumAttempts)*attemptAllowance + runClosedMargin
}

// endInLane ends delivery d as change decides (WaitExpired, RunClosed), under its
// endpoint's and lane's locks, and releases the next of its lane when it ended a
// released one.
func endInLane(ctx context.Context, st Writer, d store.LaneDelivery, change Change) error {
	_, err := st.InTx(ctx, d.Env(), func(tx *store.Tx) error {
		if err := tx.LockDeliveryEndpoint(d.ID); err != nil {
			return err
		}
		if err := tx.LockDeliveryLane(d.ID); err != nil {
			return err
		}
		got, moved, err := tx.EndDelivery(d.ID, Transition(StatusChange{Change: change}))
		if err != nil || !moved || change != RunClosed {
			return err
		}
		return releaseAfter(tx, got.Ordered, got.EndpointID, got.ObjectID, got.Status)
	})
	return err
}
