package webhook

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/webhookfilter"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// FanOut decides what a change's events become (store.FanOut, CONTRACT §8, §13, §25), in
// the change's transaction: each event's webhook body; one delivery per endpoint of the
// environment that is enabled, subscribed to the event's type and whose filter, if any,
// takes the body, each with a copy of the endpoint's retry policy (NewDelivery); the
// endpoints a filter left out listed on the event; an event with no delivery skipped at
// once; and each event's Fanout, which its start sends Temporal without reading anything
// back. It reads the environment's enabled endpoints (one statement, only for a change
// that emits); each filter is parsed once per text and process (its cache), each body
// decoded at most once for all the filters that read it. internal/app builds one per
// process and wires it into the store (store.Store.SetFanOut).
type FanOut struct {
	filters filterCache
}

// NewFanOut is a fan-out with an empty filter cache.
func NewFanOut() *FanOut {
	return &FanOut{filters: filterCache{byText: map[string]*webhookfilter.Filter{}}}
}

var _ store.FanOut = (*FanOut)(nil)

// FanOut fills in the events of emits (store.FanOut) and returns their deliveries.
func (f *FanOut) FanOut(tx *store.Tx, events []models.Event, emits []store.Emit) ([]models.WebhookDelivery, error) {
	for i := range events {
		body, err := Body(events[i], emits[i].Object, emits[i].More...)
		if err != nil {
			return nil, err
		}
		events[i].Payload = body
	}
	eps, err := tx.EnabledEndpoints()
	if err != nil {
		return nil, fmt.Errorf("endpoints of the change's events: %w", err)
	}
	ctx := tx.Context()
	filters := f.parse(ctx, eps)
	now := tx.Now()
	var out []models.WebhookDelivery
	var dests []models.WebhookEndpoint // of out's deliveries
	owner := []int{}                   // out[k] is a delivery of events[owner[k]]
	for i := range events {
		ev := &events[i]
		ev.Status = models.EventSkipped
		ev.Fanout = &models.Fanout{}
		ev.FilteredEndpointIDs = models.IDList{}
		doc := filters.doc(ev.Payload)
		for j, ep := range eps {
			if !catalog.Matches(ep.EventTypes, ev.Type) {
				continue
			}
			if !doc.matches(ctx, filters.of[j]) {
				ev.FilteredEndpointIDs = append(ev.FilteredEndpointIDs, ep.ID)
				continue
			}
			ev.Status = models.EventPending
			out, dests, owner = append(out, NewDelivery(*ev, ep, now)), append(dests, ep), append(owner, i)
		}
	}
	if err := placeInLanes(tx, out); err != nil {
		return nil, err
	}
	waits := make([]bool, len(events)) // every delivery of the event waits in its lane
	for k, d := range out {
		waits[owner[k]] = k == 0 || owner[k-1] != owner[k] || waits[owner[k]]
		if d.WaitingFor == "" {
			waits[owner[k]] = false
			addToFanout(events[owner[k]].Fanout, d, dests[k])
		}
	}
	for i := range events {
		if waits[i] {
			// Nothing to start: its release reaches its workflow (CONTRACT §26), the way a
			// replay does; the outbox must not start it.
			events[i].DispatchedAt = &now
		}
	}
	return out, nil
}

// webhookEvent is the "event" member of a webhook body (CONTRACT §8). Sequence is the
// event's number among its object's (CONTRACT §26): absent from the body of an event
// written without one (before the release that added it), so that such a body is what
// that release sent.
type webhookEvent struct {
	ID       string `json:"id"`
	Time     string `json:"time"`
	Type     string `json:"type"`
	Sequence *int64 `json:"sequence,omitempty"`
}

// Body is the webhook body of ev (CONTRACT §8): {"event":{id,time,type,sequence},"<object
// type>":{…}}, event first, then the more members in order.
func Body(ev models.Event, object any, more ...store.BodyMember) (string, error) {
	head, err := json.Marshal(webhookEvent{ID: ev.ID, Time: ev.Time, Type: ev.Type, Sequence: ev.Sequence})
	if err != nil {
		return "", fmt.Errorf("encode event: %w", err)
	}
	obj, err := json.Marshal(object)
	if err != nil {
		return "", fmt.Errorf("encode %s snapshot: %w", ev.ObjectType, err)
	}
	key, err := json.Marshal(ev.ObjectType)
	if err != nil {
		return "", fmt.Errorf("encode object key: %w", err)
	}
	body := `{"event":` + string(head) + `,` + string(key) + `:` + string(obj)
	for _, m := range more {
		k, err := json.Marshal(m.Key)
		if err != nil {
			return "", fmt.Errorf("encode member key: %w", err)
		}
		v, err := json.Marshal(m.Value)
		if err != nil {
			return "", fmt.Errorf("encode member %s: %w", m.Key, err)
		}
		body += `,` + string(k) + `:` + string(v)
	}
	return body + `}`, nil
}

// addToFanout adds a delivery just created, with its endpoint's destination, to its
// event's fanout where EventDeliveries would list it (created_at, id), so that the start
// of a fresh event, which reads nothing back, sends Temporal exactly what a start from
// the database sends.
func addToFanout(f *models.Fanout, d models.WebhookDelivery, ep models.WebhookEndpoint) {
	i := sort.Search(len(f.Deliveries), func(i int) bool { return listedAfter(f.Deliveries[i], d) })
	f.Deliveries = slices.Insert(f.Deliveries, i, d)
	f.Destinations = slices.Insert(f.Destinations, i, models.DestinationOf(ep))
}

// listedAfter tells whether a comes after b in "ORDER BY created_at, id" (ids are UUIDs:
// their byte order is their order in any collation, hyphens standing at the same places).
func listedAfter(a, b models.WebhookDelivery) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}
