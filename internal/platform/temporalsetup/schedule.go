package temporalsetup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// Schedule is a Schedule that starts one workflow at a fixed interval.
type Schedule struct {
	ID        string
	Every     time.Duration
	Workflow  string // workflow type name
	TaskQueue string
	Args      []any
	// WorkflowID of each run; the Schedule appends the start time to it.
	WorkflowID string
}

// ensureSchedule creates the Schedule, or updates it when its interval or action differ.
// Overlaps are skipped: a run still going when the next is due is enough.
func ensureSchedule(ctx context.Context, c client.Client, namespace string, s Schedule, change func(string)) error {
	h := c.ScheduleClient().GetHandle(ctx, s.ID)
	var desc *client.ScheduleDescription
	err := untilServed(ctx, "describe schedule "+s.ID, func() (err error) {
		desc, err = h.Describe(ctx)
		return err
	})
	var notFound *serviceerror.NotFound
	switch {
	case errors.As(err, &notFound):
		_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
			ID:      s.ID,
			Spec:    spec(s),
			Action:  action(s),
			Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		})
		if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
			return nil // another setup created it in the meantime
		}
		if err != nil {
			return fmt.Errorf("create schedule %s in namespace %s: %w", s.ID, namespace, err)
		}
		change(fmt.Sprintf("schedule %s created (%s every %s)", s.ID, s.Workflow, s.Every))
		return nil
	case err != nil:
		return fmt.Errorf("describe schedule %s in namespace %s: %w", s.ID, namespace, err)
	}
	same, err := matches(desc.Schedule, s)
	if err != nil {
		return err
	}
	if same {
		return nil
	}
	if err := h.Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			sch := in.Description.Schedule
			sp := spec(s)
			sch.Spec = &sp
			sch.Action = action(s)
			if sch.Policy == nil {
				sch.Policy = &client.SchedulePolicies{}
			}
			sch.Policy.Overlap = enumspb.SCHEDULE_OVERLAP_POLICY_SKIP
			return &client.ScheduleUpdate{Schedule: &sch}, nil
		},
	}); err != nil {
		return fmt.Errorf("update schedule %s in namespace %s: %w", s.ID, namespace, err)
	}
	change(fmt.Sprintf("schedule %s updated (%s every %s)", s.ID, s.Workflow, s.Every))
	return nil
}

func spec(s Schedule) client.ScheduleSpec {
	return client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: s.Every}}}
}

func action(s Schedule) *client.ScheduleWorkflowAction {
	return &client.ScheduleWorkflowAction{
		ID:        s.WorkflowID,
		Workflow:  s.Workflow,
		TaskQueue: s.TaskQueue,
		Args:      s.Args,
	}
}

// matches tells whether an existing Schedule already does what s asks.
func matches(have client.Schedule, s Schedule) (bool, error) {
	if have.Spec == nil || len(have.Spec.Intervals) != 1 || have.Spec.Intervals[0].Every != s.Every ||
		len(have.Spec.Calendars) > 0 || len(have.Spec.CronExpressions) > 0 {
		return false, nil
	}
	if have.Policy == nil || have.Policy.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP {
		return false, nil
	}
	a, ok := have.Action.(*client.ScheduleWorkflowAction)
	if !ok || a.ID != s.WorkflowID || a.TaskQueue != s.TaskQueue || len(a.Args) != len(s.Args) {
		return false, nil
	}
	if name, ok := a.Workflow.(string); !ok || name != s.Workflow {
		return false, nil
	}
	// Describe returns the arguments as the payloads stored: compare them with ours encoded.
	dc := converter.GetDefaultDataConverter()
	for i, arg := range s.Args {
		want, err := dc.ToPayload(arg)
		if err != nil {
			return false, fmt.Errorf("encode schedule %s argument %d: %w", s.ID, i, err)
		}
		got, ok := a.Args[i].(*commonpb.Payload)
		if !ok || !bytes.Equal(got.GetData(), want.GetData()) ||
			!slices.Equal(got.GetMetadata()["encoding"], want.GetMetadata()["encoding"]) {
			return false, nil
		}
	}
	return true, nil
}
