package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/platform/isolate"
)

// ErrTypePanic: a page of a tenant's job (a meter's backfill or purge, a bulk replay) or
// a retention batch panicked on its data, and the panic was recovered (isolate.Call).
// It is retried under the activity's RetryPolicy — 1 s doubling to a minute apart for
// the jobs, 5 s to 5 minutes for retention — never at once: a page that keeps panicking
// is set aside for a growing while, and the other environments' pages keep their turns
// on the queue (CONTRACT §21). The SDK would recover the panic too, but its PanicError
// carries the panic's value and stack (argument values included) into the log and the
// run's history; this error names where and the panic's kind only.
const ErrTypePanic = "panic"

// guardedPage runs one page (where: its name among the metric's fixed labels) and turns
// a panic in it into its answer (panicAnswer).
func guardedPage[T any](ctx context.Context, where string, page func() (T, error), attrs ...any) (T, error) {
	var out T
	err := isolate.Call(where, func() (err error) {
		out, err = page()
		return err
	})
	if answer, ok := panicAnswer(ctx, err, attrs...); ok {
		return out, answer
	}
	return out, err
}

// panicAnswer is an activity's answer to err when it is a recovered panic (ok): logged
// with attrs, the ids that name the work, and answered as a retryable error of
// ErrTypePanic.
func panicAnswer(ctx context.Context, err error, attrs ...any) (answer error, ok bool) {
	var p *isolate.Panic
	if !errors.As(err, &p) {
		return nil, false
	}
	activity.GetLogger(ctx).Error("page panicked; retried under its retry policy",
		append(attrs, "panic", err.Error(), "stack", p.Stack)...)
	return temporal.NewApplicationError(err.Error(), ErrTypePanic), true
}
