package dispatch

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/revops/revops/internal/platform/isolate"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// Redispatch reaches the workflow of an event a replay put back to pending in the
// database (replay.Deliveries, CONTRACT §13) with SignalWithStart: an open run
// starts the pending deliveries it is not running yet; otherwise a new run of the same
// workflow id (ALLOW_DUPLICATE: the event id stays, so receivers can deduplicate)
// delivers what the database marks pending, with trigger manual. The event's redispatch
// mark is then cleared, unless a later replay set it again.
func (s *Starter) Redispatch(ctx context.Context, e models.Event) error {
	if e.RedispatchAt == nil {
		return nil
	}
	// A panic on the event's data fails this start alone, as any failed start.
	return isolate.Call("workflow_start", func() error { return s.redispatch(ctx, e) })
}

func (s *Starter) redispatch(ctx context.Context, e models.Event) error {
	if tracing.On() {
		// A replay is its own trace (its request's or its bulk job's, which the row
		// carries; a new one when that had none), linked to the original (CONTRACT §19).
		var span trace.Span
		ctx, span = otel.Tracer("revops/dispatch").Start(tracing.WithParent(ctx, e.RedispatchTraceParent), "replay "+e.Type,
			trace.WithLinks(tracing.LinkTo(e.TraceParent)...),
			trace.WithAttributes(attribute.String("revops.event_id", e.ID), attribute.String("revops.event_type", e.Type)))
		defer span.End()
	}
	startCtx, cancel := context.WithTimeout(ctx, orDefault(s.StartTimeout, 5*time.Second))
	defer cancel()
	// What the replay put back to pending is only in the database.
	ds, dests := s.readFanout(startCtx, e)
	opts := s.options(e, models.TriggerManual, dests)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	opts.EnableEagerStart = false // not offered with a signal
	// A new run starts the deliveries pending now at once; an open run ignores the input
	// and asks the database on the signal.
	in := s.input(e, ds, dests)
	in.Trigger = models.TriggerManual
	run, err := s.Client.SignalWithStartWorkflow(startCtx, wire.WorkflowID(e.ID), wire.SignalReplay, nil, opts, wire.WorkflowName, in)
	if err != nil {
		return fmt.Errorf("signal-with-start workflow %s: %w", wire.WorkflowID(e.ID), err)
	}
	// The run has the signal now: record it even if the caller has gone.
	markCtx, cancelMark := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancelMark()
	return s.Store.MarkRedispatched(markCtx, store.EnvOf(e), e.ID, *e.RedispatchAt, wire.WorkflowID(e.ID), run.GetRunID())
}
