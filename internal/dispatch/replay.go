package dispatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows"
)

// CodeDeliveryInProgress is the 409 code of a replay while a delivery runs (CONTRACT §4).
const CodeDeliveryInProgress = "delivery_in_progress"

// Replay starts a new run of the event's workflow (same workflow id, same event id and
// body, so receivers can deduplicate), whatever the event's status; its attempts are
// recorded with trigger manual. ALLOW_DUPLICATE reuses the id of a finished run; conflict
// policy FAIL refuses while a run is under way: a ConflictError delivery_in_progress.
// The event then goes back to pending with the new run id.
func (s *Starter) Replay(ctx context.Context, e models.Event) error {
	if !s.reachable() {
		return errTemporalAway(e.ID)
	}
	startCtx, cancel := context.WithTimeout(ctx, orDefault(s.StartTimeout, 5*time.Second))
	defer cancel()
	opts := s.options(startCtx, e, models.TriggerManual)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	opts.WorkflowIDConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
	opts.WorkflowExecutionErrorWhenAlreadyStarted = true // else the SDK hands back the running run
	in := s.input(e)
	in.Trigger = models.TriggerManual
	run, err := s.Client.ExecuteWorkflow(startCtx, opts, workflows.WorkflowName, in)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return apperr.Conflict(CodeDeliveryInProgress, "Event %s is being delivered now; replay it once this delivery has ended.", e.ID)
	}
	if isUnreachable(err) {
		return fmt.Errorf("replay workflow %s: %w (%w)", workflows.WorkflowID(e.ID), errTemporalAway(e.ID), err)
	}
	if err != nil {
		return fmt.Errorf("replay workflow %s: %w", workflows.WorkflowID(e.ID), err)
	}
	// The run exists now: record it even if the caller has gone.
	markCtx, cancelMark := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancelMark()
	return s.Store.MarkReplayed(markCtx, store.EnvOf(e), e.ID, workflows.WorkflowID(e.ID), run.GetRunID(), time.Now().UTC())
}

// errTemporalAway answers a replay while Temporal cannot be reached: 503, the code of a
// process that cannot replay (CONTRACT §4: api_error, no internals), so clients retry later.
func errTemporalAway(eventID string) error {
	return apperr.Request(http.StatusServiceUnavailable, "replay_unavailable", "",
		"Event %s cannot be replayed now: the workflow service is unreachable. Retry in a moment.", eventID)
}

// isUnreachable tells a start that failed because Temporal did not answer (no
// connection, or none within the start timeout) from one Temporal refused.
func isUnreachable(err error) bool {
	if err == nil {
		return false
	}
	var unavailable *serviceerror.Unavailable
	var deadline *serviceerror.DeadlineExceeded
	return errors.As(err, &unavailable) || errors.As(err, &deadline) || errors.Is(err, context.DeadlineExceeded) ||
		status.Code(err) == codes.Unavailable || status.Code(err) == codes.DeadlineExceeded
}
