package webhook

import (
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Order lanes (CONTRACT §26): a lane is one endpoint and one object; on an ordered
// endpoint a delivery's first attempt starts only once every earlier delivery of its lane
// has ended. The decisions are made here, in the transactions that create deliveries and
// change their status, under the lane's lock (the object's sequence row, which the
// change's numbering, the attempt's record, MarkDeliveryFailed and a replay take before
// any event's): a new or replayed delivery waits (pending, waiting_for set, no run) when
// its lane has an unfinished one; a delivery's ending releases the lowest-sequence
// waiting one unless the endpoint is disabled (store.Tx.ReleaseNext).

// laneKey names a lane.
type laneKey struct{ endpoint, object string }

// placeInLanes makes each ordered delivery of a change wait behind the last unfinished
// delivery of its lane — one already stored (one statement, only for a change with
// ordered deliveries), or an earlier one of this change (emission order is sequence
// order) — and returns whether each event of the change has a delivery that does not
// wait. The change holds its objects' lanes (the store numbered its events first).
func placeInLanes(tx *store.Tx, out []models.WebhookDelivery) error {
	var eps, objs []string
	seen := map[string]bool{}
	for _, d := range out {
		if !d.Ordered {
			continue
		}
		if !seen["e"+d.EndpointID] {
			seen["e"+d.EndpointID] = true
			eps = append(eps, d.EndpointID)
		}
		if !seen["o"+d.ObjectID] {
			seen["o"+d.ObjectID] = true
			objs = append(objs, d.ObjectID)
		}
	}
	if len(eps) == 0 {
		return nil
	}
	tails, err := tx.LaneTails(eps, objs)
	if err != nil {
		return err
	}
	last := make(map[laneKey]string, len(tails))
	for _, t := range tails {
		last[laneKey{t.EndpointID, t.ObjectID}] = t.EventID
	}
	for i := range out {
		d := &out[i]
		if !d.Ordered {
			continue
		}
		k := laneKey{d.EndpointID, d.ObjectID}
		d.WaitingFor = last[k]
		last[k] = d.EventID
	}
	return nil
}

// ordered tells whether ev's delivery to ep is in its lane: the endpoint asks for order
// and the event has a sequence (one written before the release has none: it is
// delivered as on an unordered endpoint).
func ordered(ev models.Event, ep models.WebhookEndpoint) bool {
	return ep.Ordering == models.OrderingObject && ev.Sequence != nil
}

// releaseAfter releases the next delivery of d's lane when d is ordered and has ended
// (status): the caller holds the lane.
func releaseAfter(tx *store.Tx, ordered bool, endpointID, objectID, status string) error {
	if !ordered || !Ends(status) {
		return nil
	}
	_, err := tx.ReleaseNext(endpointID, objectID)
	return err
}

// joinLane makes a replayed delivery of an ordered endpoint wait behind its lane's
// released unfinished delivery, if there is one (CONTRACT §26: a replay joins its lane
// behind the one in flight); it tells whether the delivery was released.
func joinLane(tx *store.Tx, d models.WebhookDelivery) (released bool, err error) {
	if !d.Ordered {
		return true, nil
	}
	head, err := tx.LaneHead(d.EndpointID, d.ObjectID, d.ID)
	if err != nil {
		return false, err
	}
	if head == "" {
		if d.WaitingFor != "" {
			err = tx.WaitBehind(d.ID, "") // released: no longer waiting
		}
		return true, err
	}
	return false, tx.WaitBehind(d.ID, head)
}

// JoinLanes is joinLane for each of a replay's deliveries (ds, as they are now: back to
// pending, or new); it tells whether any of them goes at once (its event is then
// redispatched).
func JoinLanes(tx *store.Tx, ds []models.WebhookDelivery) (anyReleased bool, err error) {
	for _, d := range ds {
		released, err := joinLane(tx, d)
		if err != nil {
			return false, err
		}
		anyReleased = anyReleased || released
	}
	return anyReleased, nil
}

// LaneReleasePage bounds the lanes one transaction releases (an endpoint's re-enabling,
// a pass of the minute check): a re-enabled endpoint with more waiting lanes has the
// rest released by the minute check, a page per pass (CONTRACT §21).
const LaneReleasePage = 100
