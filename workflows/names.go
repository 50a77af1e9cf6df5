// Package workflows holds the Temporal workflows of Revops and the names the starter
// (API, sweeper) and the worker share.
package workflows

import enumspb "go.temporal.io/api/enums/v1"

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

// SearchAttributeTypes is every attribute the namespace must have (CONTRACT §10, §13),
// with its type: `revops temporal-setup` and `revops dev` register exactly these. A test
// checks it covers SearchAttributes.
var SearchAttributeTypes = map[string]enumspb.IndexedValueType{
	AttrEventType:      enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	AttrObjectID:       enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	AttrEnvironment:    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	AttrOrganizationID: enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	AttrEndpointIDs:    enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST,
}

// WorkflowID is the id of the delivery workflow of one event.
func WorkflowID(eventID string) string { return "webhook-" + eventID }
