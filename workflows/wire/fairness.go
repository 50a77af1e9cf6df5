package wire

import "go.temporal.io/sdk/temporal"

// FairnessWeight is every environment's weight: each environment with work waiting gets
// an equal share of the dispatches of a queue (CONTRACT §17: none takes more than its
// share). A heavier share for one key, if ever needed, is an operator's weight override
// on the task queue (Temporal's UpdateTaskQueueConfig), not a release.
const FairnessWeight = 1.0

// FairnessKey is the fairness key of an organization's environment on revops-webhooks:
// "<organization id>/<live|sandbox>" (44 bytes with uuid ids; Temporal allows 64). It is
// built from what every delivery input carries, those of runs started by earlier
// releases included, so a run's start and its attempts always agree.
func FairnessKey(organizationID, environment string) string {
	return organizationID + "/" + environment
}

// DeliveryPriority is the priority of an environment's delivery runs and of each of
// their DeliverWebhook attempts.
func DeliveryPriority(organizationID, environment string) temporal.Priority {
	return temporal.Priority{FairnessKey: FairnessKey(organizationID, environment), FairnessWeight: FairnessWeight}
}

// JobsPriority is the priority of an environment's runs on revops-jobs. Their key is the
// environment's id, which names the environment as FairnessKey does but is all a replay
// job's row (and a usage row) carries; keys are only ever compared within one queue.
func JobsPriority(environmentID string) temporal.Priority {
	return temporal.Priority{FairnessKey: environmentID, FairnessWeight: FairnessWeight}
}

// PacedKeyRate is the default per-key rate of the paced queue, per second: a key's rate
// is this times its weight, so that each paced endpoint's weight override is its rate in
// per-second units (CONTRACT §27).
const PacedKeyRate = 1.0

// Bounds Temporal clamps a fairness weight to.
const (
	MinFairnessWeight = 0.001
	MaxFairnessWeight = 1000
)

// PacedWeight is the weight of a paced endpoint's key: its rate per second, within the
// bounds Temporal keeps weights to (1 per minute and 1,000 per second both are); the
// overrides use the same clamp (temporalsetup.Weight).
func PacedWeight(rate float64) float32 {
	return float32(min(max(rate, MinFairnessWeight), MaxFairnessWeight))
}

// PacedPriority is the priority of an attempt to a paced endpoint: the endpoint's key,
// with its rate as read when the series began as the task's weight. The queue's weight
// override of the key, which every rate change updates, wins over it; the task's weight
// only serves until the override is there (a per-task weight alone would be frozen into
// attempts already scheduled).
func PacedPriority(endpointID string, rate float64) temporal.Priority {
	return temporal.Priority{FairnessKey: endpointID, FairnessWeight: PacedWeight(rate)}
}
