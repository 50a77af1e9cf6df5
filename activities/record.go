package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Time kept for an attempt's record (CONTRACT §10).
const (
	maxRecordReserve = time.Second // taken from the HTTP exchange's share of the attempt
	recordMargin     = time.Second // how far past the attempt's deadline the record may run
	recordBackoff    = 50 * time.Millisecond
	maxRecordBackoff = 400 * time.Millisecond
)

// recordReserve is the part of the attempt's remaining time kept for writing its
// record: maxRecordReserve, or a tenth of what is left when an attempt is short.
func recordReserve(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return maxRecordReserve
	}
	return max(0, min(maxRecordReserve, time.Until(d)/10))
}

// withReserve is ctx ending reserve before the attempt's deadline: the HTTP exchange's.
func withReserve(ctx context.Context, reserve time.Duration) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, d.Add(-reserve))
}

// record writes the attempt and the event's status with a context detached from the
// activity's (an attempt cut by its deadline is still recorded), and retries a failed
// write with a short backoff for at most reserve+recordMargin. The contract asks for
// this loop (CONTRACT §10): Temporal's retry would repeat the send, not just the write.
// The attempt keeps one id across tries, so a write that committed unseen is not doubled.
func (a *Activities) record(ctx context.Context, env store.Env, att *models.DeliveryAttempt, status string, reserve time.Duration) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reserve+recordMargin)
	defer cancel()
	if att.ID == "" {
		att.ID = uuid.NewString()
	}
	backoff := recordBackoff
	for tries := 1; ; tries++ {
		err := a.Store.RecordDelivery(ctx, env, att, status)
		if err == nil {
			return nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("record attempt (%d tries): %w", tries, err)
		case <-t.C:
		}
		backoff = min(2*backoff, maxRecordBackoff)
	}
}

// MarkFailedInput names the event whose delivery run ends without delivery.
type MarkFailedInput struct {
	EventID string
}

// MarkDeliveryFailed sets the event failed unless it already has a final status. The
// workflow runs it, under its own retry policy, once DeliverWebhook has finally failed:
// the last attempt's own record may have failed, and no event may stay retrying after
// its run closed.
func (a *Activities) MarkDeliveryFailed(ctx context.Context, in MarkFailedInput) error {
	return a.Store.MarkDeliveryFailed(ctx, in.EventID)
}
