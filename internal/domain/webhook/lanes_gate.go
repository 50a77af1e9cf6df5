package webhook

import (
	"context"
	"errors"
	"strings"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// The rolling-upgrade gate of CONTRACT §26: `ordering: "object"` is refused until every
// worker runs a release that honours order lanes. A worker of such a release names it in
// its Temporal identity (WorkerIdentity: its version, §16, and LanesCapability), which
// Temporal shows for every worker that polls a task queue (DescribeTaskQueue, the
// Temporal UI's task queue page, `temporal task-queue describe`): an operator sees there
// which release each worker runs, and so does this check. A worker of an earlier release
// has the SDK's default identity (pid@host), without the capability.

// LanesCapability is the word a worker's identity carries when it honours order lanes.
const LanesCapability = "+lanes"

// WorkerIdentity is the Temporal identity of a worker of this release: the SDK's default
// (base, pid@host), the release's version and LanesCapability.
func WorkerIdentity(base, version string) string {
	return base + " revops/" + version + " " + LanesCapability
}

// HonoursLanes tells whether a worker's identity names a release that honours order
// lanes.
func HonoursLanes(identity string) bool {
	return strings.HasSuffix(identity, " "+LanesCapability) || strings.Contains(identity, " "+LanesCapability+" ")
}

// WorkerIdentities lists the identities of the workers that polled the deployment's task
// queues lately (internal/dispatch.Pollers asks Temporal).
type WorkerIdentities interface {
	WorkerIdentities(ctx context.Context) ([]string, error)
}

// ErrOrderingNotReady is the fault of `ordering: "object"` while a worker runs a release
// that does not honour order lanes, or none can be seen.
var ErrOrderingNotReady = errors.New("ordering needs every worker to honour order lanes")

// CheckOrdering refuses ordering "object" (400 on "ordering", saying why) unless every
// worker w sees honours lanes and there is at least one; any other ordering passes. A
// process wired without w (nil) refuses "object" too: it cannot tell.
func CheckOrdering(ctx context.Context, w WorkerIdentities, ordering string) error {
	if ordering != models.OrderingObject {
		return nil
	}
	refuse := func(why string, args ...any) error {
		return apperr.Invalid(ErrOrderingNotReady, apperr.CodeParameterInvalid, "ordering",
			`ordering "object" is refused until every worker runs a release that honours order lanes: `+why, args...)
	}
	if w == nil {
		return refuse("this process cannot see the workers.")
	}
	ids, err := w.WorkerIdentities(ctx)
	if err != nil {
		return refuse("the workers could not be listed (%v); retry.", err)
	}
	if len(ids) == 0 {
		return refuse("no worker polls the task queues now; start the workers, then retry.")
	}
	for _, id := range ids {
		if !HonoursLanes(id) {
			return refuse("worker %q runs an earlier release (see its identity in Temporal's task queue view); upgrade it, then retry.", id)
		}
	}
	return nil
}

// CheckOrdering is CheckOrdering with the workers the process sees (e.LaneWorkers): the
// endpoint's create and update call it when the request sets ordering.
func (e *Endpoints) CheckOrdering(ctx context.Context, ordering string) error {
	return CheckOrdering(ctx, e.LaneWorkers, ordering)
}

// checkOrdering is the rolling-upgrade gate for a write that sets ordering.
func (e *Endpoints) checkOrdering(ctx context.Context, p EndpointPatch) error {
	if p.Ordering == nil {
		return nil
	}
	return e.CheckOrdering(ctx, *p.Ordering)
}
