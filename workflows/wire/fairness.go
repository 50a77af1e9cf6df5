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
