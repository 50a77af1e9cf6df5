package models

// PendingDelivery is one pending delivery as its WebhookDelivery run carries it: in the
// run's input (the dispatcher's) and in PendingDeliveries' result (the run's). Ids and
// the retry policy the delivery copied from its endpoint when it was created, never a
// URL or a secret. It lives here, below both, because the dispatcher builds the input
// and the activities read it, and neither may import the other. Recorded workflow
// histories hold its JSON: field names and types stay as they are.
type PendingDelivery struct {
	ID         string
	EndpointID string
	Policy     RetryPolicy
	// Replays is the delivery's replay count when it was read: its series hands it to
	// MarkDeliveryFailed, which then leaves a delivery replayed since pending. nil in
	// the histories of earlier releases, which did not read it.
	Replays *int `json:",omitempty"`
	// Pace is the endpoint's rate per second when the delivery was read (CONTRACT §27):
	// its attempts go to the paced task queue under the endpoint's fairness key. 0
	// (absent, as in every history of earlier releases): unpaced.
	Pace float64 `json:",omitempty"`
}

// PendingDeliveryOf is the run's view of a delivery.
func PendingDeliveryOf(d WebhookDelivery) PendingDelivery {
	return PendingDelivery{ID: d.ID, EndpointID: d.EndpointID, Policy: d.RetryPolicy, Replays: &d.Replays}
}
