package workflows

import (
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/workflows/wire"
)

// priorityOf is the priority a delivery run gives its attempts explicitly: a run started
// by a release that set none on the run has it too. (Replay matches an activity's
// command by id and type only, so this needs no GetVersion.)
func priorityOf(in wire.DeliveryInput) temporal.Priority {
	return wire.DeliveryPriority(in.OrganizationID, in.Environment)
}
