package replay

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/tracing"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// CodeDeliveryInProgress is the conflict of a replay whose delivery is still under way.
const CodeDeliveryInProgress = "delivery_in_progress"

// Replays refused for their endpoint_id: one that names no endpoint of the environment,
// and one whose endpoint is not subscribed to the event's type and never had a delivery
// of it.
var (
	ErrUnknownEndpoint       = errors.New("not a webhook endpoint of this environment")
	ErrEndpointNotSubscribed = errors.New("webhook endpoint not subscribed to the event's type")
)

// Event is a replay that answers a request (POST /v1/events/{id}/replay): the replay
// (replayIn), then the event read back with its attempts and deliveries and reply's
// answer (CONTRACT §14: its events.Object, linking by links) kept from it, all in one
// transaction — the answer is stored with
// the replay or not at all, so a retry with the same Idempotency-Key never replays the
// event twice. A bulk replay, which answers once for many events, replays each in its
// page's transaction (Page).
func Event(ctx context.Context, st Store, env models.Env, eventID, endpointID string, links events.Links, reply store.Keeper[events.Object]) (events.Event, error) {
	trace := tracing.TraceParent(ctx)
	var out events.Event
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		ev, err := replayIn(tx, eventID, endpointID, trace)
		if err != nil {
			return err
		}
		attempts, err := tx.EventAttempts(ev.ID)
		if err != nil {
			return err
		}
		deliveries, err := tx.EventDeliveries(ev.ID)
		if err != nil {
			return err
		}
		out = events.Assemble(ev, attempts, deliveries)
		return reply.Keep(tx, events.ToObject(out, links))
	})
	if err != nil {
		return events.Event{}, err
	}
	return out, nil
}

// Deliveries replays one event of the environment in a transaction of its own, keeping
// no answer, and returns the event as the replay left it (marked for redispatch when a
// delivery goes again): replayIn's rule.
func Deliveries(ctx context.Context, st Store, env models.Env, eventID, endpointID string) (models.Event, error) {
	trace := tracing.TraceParent(ctx)
	var ev models.Event
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		var err error
		ev, err = replayIn(tx, eventID, endpointID, trace)
		return err
	})
	return ev, err
}

// replayIn decides a replay of an event (CONTRACT §13) in tx, under the event's row
// lock: the chosen deliveries — the one to endpointID, or all of them when endpointID is
// "" — go back to pending (each counting the replay: see store.MarkDeliveryFailed); if
// one of them is pending or retrying, nothing changes and the answer is a ConflictError
// delivery_in_progress naming its endpoint. Without endpointID, endpoints enabled and
// subscribed now that had no delivery get one, and deliveries whose endpoint was deleted
// stay as they are. The event's status is summarised again and, when a delivery goes
// again, it is marked for redispatch under the replay's trace: the dispatcher (after
// commit) or the sweeper reaches its workflow with SignalWithStart. An endpointID that
// is not an endpoint of the environment, or one not subscribed to the event's type that
// never had a delivery of it, is an *apperr.InvalidError on param endpoint_id
// (ErrUnknownEndpoint, ErrEndpointNotSubscribed). Every refusal comes before any write;
// a bulk page runs each replay in a savepoint, so that a refusal also lets the event's
// lock go at once.
func replayIn(tx *store.Tx, eventID, endpointID, trace string) (models.Event, error) {
	if err := tx.LockEventLane(eventID); err != nil { // the lane before the event (CONTRACT §26)
		return models.Event{}, err
	}
	ev, err := tx.LockEvent(eventID)
	if err != nil {
		return ev, err
	}
	eps, err := tx.ReplayEndpoints(endpointID)
	if err != nil {
		return ev, err
	}
	if endpointID != "" && len(eps) == 0 {
		return ev, apperr.Invalid(ErrUnknownEndpoint, apperr.CodeParameterInvalid, "endpoint_id",
			"endpoint_id %q is not a webhook endpoint of this environment.", endpointID)
	}
	ds, err := tx.EventDeliveries(eventID)
	if err != nil {
		return ev, err
	}
	again, fresh, err := choose(ev, eps, ds, endpointID)
	if err != nil {
		return ev, err
	}
	if err := tx.RequeueDeliveries(eventID, again, webhook.Transition(webhook.StatusChange{Change: webhook.Requeued})); err != nil {
		return ev, err
	}
	added := newDeliveries(ev, fresh, tx.Now())
	if err := tx.AddDeliveries(eventID, added); err != nil {
		return ev, err
	}
	// Each joins its order lane behind the one in flight (CONTRACT §26); the event goes
	// again when one of them does.
	goes, err := webhook.JoinLanes(tx, append(replayed(ds, again), added...))
	if err != nil {
		return ev, err
	}
	return tx.SummarizeReplayed(eventID, goes, trace)
}

// replayed are the deliveries of ds named by ids.
func replayed(ds []models.WebhookDelivery, ids []string) []models.WebhookDelivery {
	var out []models.WebhookDelivery
	for _, d := range ds {
		if slices.Contains(ids, d.ID) {
			out = append(out, d)
		}
	}
	return out
}

// newDeliveries are the replay's new deliveries of ev, one to each of eps.
func newDeliveries(ev models.Event, eps []models.WebhookEndpoint, now time.Time) []models.WebhookDelivery {
	out := make([]models.WebhookDelivery, len(eps))
	for i, ep := range eps {
		out[i] = webhook.NewDelivery(ev, ep, now)
	}
	return out
}

// choose picks the deliveries a replay puts back to pending (ids) and the endpoints it
// gives a new delivery, or the refusal. eps are the endpoints concerned (one when
// endpointID is set); ds the event's deliveries. A replay never re-evaluates an
// endpoint's filter (CONTRACT §25): an endpoint that had no delivery gets one when it is
// subscribed to the type now, and enabled or named by endpointID; one whose filter left
// the event out when it was written (ev.FilteredEndpointIDs) only when named.
func choose(ev models.Event, eps []models.WebhookEndpoint, ds []models.WebhookDelivery, endpointID string) ([]string, []models.WebhookEndpoint, error) {
	byEndpoint := map[string]models.WebhookDelivery{}
	for _, d := range ds {
		byEndpoint[d.EndpointID] = d
	}
	var again []string
	var fresh []models.WebhookEndpoint
	for _, ep := range eps {
		d, had := byEndpoint[ep.ID]
		switch {
		case had && (d.Status == models.EventPending || d.Status == models.EventRetrying):
			return nil, nil, apperr.Conflict(CodeDeliveryInProgress,
				"The delivery of event %s to webhook endpoint %s is still %s; replay it once it has ended.", ev.ID, ep.ID, d.Status)
		case had:
			again = append(again, d.ID)
		case endpointID == "" && slices.Contains(ev.FilteredEndpointIDs, ep.ID):
			// Filtered out when the event was written: a replay of every delivery
			// does not re-evaluate the filter, and gives it none.
		case catalog.Matches(ep.EventTypes, ev.Type) && (ep.Enabled || endpointID != ""):
			fresh = append(fresh, ep)
		case endpointID != "":
			return nil, nil, apperr.Invalid(ErrEndpointNotSubscribed, apperr.CodeParameterInvalid, "endpoint_id",
				"Webhook endpoint %s is not subscribed to %s events.", ep.ID, ev.Type)
		}
	}
	return again, fresh, nil
}
