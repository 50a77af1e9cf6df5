// Package workflows holds the Temporal workflows of Revops and the names the starter
// (API, sweeper) and the worker share.
package workflows

// TaskQueue is where webhook deliveries run.
const TaskQueue = "revops-webhooks"

// Search attributes set on every delivery run (CONTRACT §10), all of Keyword type.
const (
	AttrEventType      = "RevopsEventType"
	AttrObjectID       = "RevopsObjectId"
	AttrEnvironment    = "RevopsEnvironment"
	AttrOrganizationID = "RevopsOrganizationId"
)

// SearchAttributes lists the attributes the Temporal namespace must have.
var SearchAttributes = []string{AttrEventType, AttrObjectID, AttrEnvironment, AttrOrganizationID}

// WorkflowID is the id of the delivery workflow of one event.
func WorkflowID(eventID string) string { return "webhook-" + eventID }
