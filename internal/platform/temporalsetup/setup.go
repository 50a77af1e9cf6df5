// Package temporalsetup prepares a Temporal namespace for Revops (CONTRACT §16): the
// namespace with its retention, the search attributes, and the Schedules. Every step
// compares what is there with what is wanted and changes only what differs, so running it
// again is harmless. `revops temporal-setup` and `revops dev` call it.
package temporalsetup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Options are what the namespace must hold.
type Options struct {
	Namespace string
	// Retention is how long Temporal keeps closed runs' histories (REVOPS_RETENTION).
	Retention time.Duration
	// SearchAttributes are the custom attributes with their types.
	SearchAttributes map[string]enumspb.IndexedValueType
	Schedules        []Schedule
	// PacedQueue, when set, is given the per-key default rate PacedKeyRate (CONTRACT §27:
	// paced endpoints; their weight overrides are kept by the API and the minute check).
	PacedQueue   string
	PacedKeyRate float32
	// Settle is how long to wait after adding search attributes, for every service's
	// namespace cache to reload (the server's namespace refresh interval): until then a
	// start that sets a new attribute may be refused.
	Settle time.Duration
	Log    *slog.Logger
}

// Result lists what a run changed; empty when everything was already in place.
type Result struct {
	Changes []string
}

// pollEvery is how often a step waits for the server to see a change.
const pollEvery = 100 * time.Millisecond

// Run brings the namespace to the state opts describe. c may be a client of any namespace
// (registering one does not need it).
func Run(ctx context.Context, c client.Client, opts Options) (Result, error) {
	if opts.Namespace == "" {
		return Result{}, errors.New("temporal setup: namespace is empty")
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	var res Result
	change := func(what string) {
		res.Changes = append(res.Changes, what)
		opts.Log.Info("temporal setup", "namespace", opts.Namespace, "change", what)
	}
	if err := ensureNamespace(ctx, c, opts, change); err != nil {
		return res, err
	}
	added, err := EnsureSearchAttributes(ctx, c, opts.Namespace, opts.SearchAttributes)
	if err != nil {
		return res, err
	}
	if len(added) > 0 {
		change(fmt.Sprintf("search attributes %v added", added))
		if err := Sleep(ctx, opts.Settle); err != nil {
			return res, err
		}
	}
	for _, s := range opts.Schedules {
		if err := ensureSchedule(ctx, c, opts.Namespace, s, change); err != nil {
			return res, err
		}
	}
	if opts.PacedQueue != "" {
		q := PacedQueue{Client: c, Namespace: opts.Namespace, Queue: opts.PacedQueue}
		var changed bool
		err := untilServed(ctx, "paced task queue", func() (err error) {
			changed, err = q.EnsureDefaultRate(ctx, opts.PacedKeyRate)
			return err
		})
		if err != nil {
			return res, err
		}
		if changed {
			change(fmt.Sprintf("task queue %s: %v per second per fairness key, times its weight", opts.PacedQueue, opts.PacedKeyRate))
		}
	}
	return res, nil
}

// ensureNamespace registers the namespace when it is missing and sets its retention when
// it differs, then waits until the frontend serves it.
func ensureNamespace(ctx context.Context, c client.Client, opts Options, change func(string)) error {
	ws := c.WorkflowService()
	desc, err := ws.DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: opts.Namespace})
	var notFound *serviceerror.NamespaceNotFound
	switch {
	case errors.As(err, &notFound):
		if _, err := ws.RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
			Namespace:                        opts.Namespace,
			Description:                      "Revops",
			WorkflowExecutionRetentionPeriod: durationpb.New(opts.Retention),
		}); err != nil && !isAlreadyExists(err) {
			return fmt.Errorf("register namespace %s: %w", opts.Namespace, err)
		}
		change(fmt.Sprintf("namespace registered with retention %s", opts.Retention))
	case err != nil:
		return fmt.Errorf("describe namespace %s: %w", opts.Namespace, err)
	case desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration() != opts.Retention:
		old := desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration()
		cfg := desc.GetConfig()
		cfg.WorkflowExecutionRetentionTtl = durationpb.New(opts.Retention)
		if _, err := ws.UpdateNamespace(ctx, &workflowservice.UpdateNamespaceRequest{
			Namespace: opts.Namespace,
			Config:    cfg,
		}); err != nil {
			return fmt.Errorf("set retention of namespace %s: %w", opts.Namespace, err)
		}
		change(fmt.Sprintf("namespace retention %s → %s", old, opts.Retention))
	}
	return nil
}

// untilServed repeats f while the namespace is not known yet to the service answering
// it: a namespace just registered reaches each service's cache on its next refresh.
func untilServed(ctx context.Context, what string, f func() error) error {
	for {
		err := f()
		var notFound *serviceerror.NamespaceNotFound
		if !errors.As(err, &notFound) {
			return err
		}
		if serr := Sleep(ctx, pollEvery); serr != nil {
			return fmt.Errorf("%s: namespace not served yet: %w (last error: %v)", what, serr, err)
		}
	}
}

func isAlreadyExists(err error) bool {
	var nsExists *serviceerror.NamespaceAlreadyExists
	var exists *serviceerror.AlreadyExists
	return errors.As(err, &nsExists) || errors.As(err, &exists)
}

// Sleep waits d, or less if ctx ends first (then it returns ctx's error). The setup's
// polls and `revops dev`'s (internal/platform/devstack) wait with it.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
