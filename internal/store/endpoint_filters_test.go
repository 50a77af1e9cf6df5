package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// newFilteredEndpoint creates an enabled endpoint of every type with filter (JSON text).
func newFilteredEndpoint(t testing.TB, db seeded, url, filter string) models.WebhookEndpoint {
	t.Helper()
	ep, err := webhook.CreateEndpoint(context.Background(), db.st, db.env, models.WebhookEndpoint{
		URL: url, Method: "POST", Enabled: true, Secret: "whsec_" + uuid.NewString(), Filter: filter,
	}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		t.Fatalf("create endpoint %s: %v", url, err)
	}
	return ep
}

// storedFiltered is the event's filtered_endpoint_ids as the database holds them.
func storedFiltered(t *testing.T, db seeded, id string) []string {
	t.Helper()
	ev, _, err := db.st.EventByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ev.FilteredEndpointIDs
}

// An endpoint whose filter rejects an event's payload gets no delivery, in the change's
// own transaction, and the event lists it as filtered (CONTRACT §25); an event every
// endpoint filtered out is skipped.
func TestFilterLeavesEndpointOut(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		picky := newFilteredEndpoint(t, db, "https://picky.example/h", `{"account.Name":"Initech"}`)
		if ev := newAccountEvent(t, db); ev.Status != models.EventSkipped || eventStatus(t, db, ev.ID) != models.EventSkipped ||
			len(deliveriesByEndpoint(t, db, ev.ID)) != 0 || !slices.Equal(storedFiltered(t, db, ev.ID), []string{picky.ID}) {
			t.Fatalf("event every endpoint filtered out: status %s, filtered %v; want skipped, [%s]",
				eventStatus(t, db, ev.ID), storedFiltered(t, db, ev.ID), picky.ID)
		}

		plain := newEndpoint(t, db, "https://plain.example/h", nil, true)
		keen := newFilteredEndpoint(t, db, "https://keen.example/h", `{"account.Name":"Globex","event.type":{"$in":["account-created"]}}`)
		ev := newAccountEvent(t, db) // Globex
		got := deliveriesByEndpoint(t, db, ev.ID)
		if _, ok := got[picky.ID]; ok || len(got) != 2 || got[plain.ID].ID == "" || got[keen.ID].ID == "" {
			t.Fatalf("deliveries %v; want the plain and the keen endpoints' only", got)
		}
		if !slices.Equal(ev.FilteredEndpointIDs, []string{picky.ID}) || !slices.Equal(storedFiltered(t, db, ev.ID), []string{picky.ID}) {
			t.Fatalf("filtered %v, stored %v; want [%s]", ev.FilteredEndpointIDs, storedFiltered(t, db, ev.ID), picky.ID)
		}
		if len(ev.Fanout.Deliveries) != 2 || ev.Status != models.EventPending {
			t.Fatalf("fanout %d deliveries, status %s; want 2, pending", len(ev.Fanout.Deliveries), ev.Status)
		}
		if none := newAccountEventWithoutFilters(t, db); len(none) != 0 {
			t.Fatalf("an event no filter rejects lists %v as filtered", none)
		}
	})
}

// newAccountEventWithoutFilters removes every endpoint's filter, writes an event and
// returns its stored filtered_endpoint_ids (an empty array, never null).
func newAccountEventWithoutFilters(t *testing.T, db seeded) []string {
	t.Helper()
	ctx := context.Background()
	eps, err := db.st.AllWebhookEndpoints(ctx, db.env)
	if err != nil {
		t.Fatal(err)
	}
	none := ""
	for _, ep := range eps {
		if _, err := webhook.UpdateEndpoint(ctx, db.st, db.env, ep.ID, webhook.EndpointPatch{Filter: &none}, time.Now().UTC(),
			idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}
	}
	got := storedFiltered(t, db, newAccountEvent(t, db).ID)
	if got == nil {
		t.Fatal("filtered_endpoint_ids stored as null, want []")
	}
	return got
}

// A replay never re-evaluates a filter (CONTRACT §25): replaying every delivery leaves
// out an endpoint the filter rejected when the event was written, even once its filter
// would take it, yet gives a delivery to an endpoint subscribed since whose filter would
// reject it; naming the filtered endpoint gives it one.
func TestReplayDoesNotReevaluateFilters(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		plain := newEndpoint(t, db, "https://plain.example/h", nil, true)
		picky := newFilteredEndpoint(t, db, "https://picky.example/h", `{"account.Name":"Initech"}`)
		ev := newAccountEvent(t, db)
		if err := db.st.SetEventStatus(ctx, db.env, ev.ID, models.EventFailed); err != nil {
			t.Fatal(err)
		}
		none := ""
		if _, err := webhook.UpdateEndpoint(ctx, db.st, db.env, picky.ID, webhook.EndpointPatch{Filter: &none}, time.Now().UTC(),
			idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}
		later := newFilteredEndpoint(t, db, "https://later.example/h", `{"account.Name":"Initech"}`)

		if _, err := replay.Deliveries(ctx, db.st, db.env, ev.ID, ""); err != nil {
			t.Fatal(err)
		}
		got := deliveriesByEndpoint(t, db, ev.ID)
		if _, ok := got[picky.ID]; ok || got[plain.ID].Status != models.EventPending || got[later.ID].Status != models.EventPending {
			t.Fatalf("after replaying every delivery: %v; want plain and later pending, none to the filtered endpoint", got)
		}

		if err := db.st.SetEventStatus(ctx, db.env, ev.ID, models.EventFailed); err != nil {
			t.Fatal(err)
		}
		if _, err := replay.Deliveries(ctx, db.st, db.env, ev.ID, picky.ID); err != nil {
			t.Fatal(err)
		}
		if d := deliveriesByEndpoint(t, db, ev.ID)[picky.ID]; d.Status != models.EventPending {
			t.Fatalf("replay naming the filtered endpoint: delivery %+v, want a pending one", d)
		}
		if !slices.Equal(storedFiltered(t, db, ev.ID), []string{picky.ID}) {
			t.Fatalf("filtered %v after the replays; want the record of the fan-out kept", storedFiltered(t, db, ev.ID))
		}
	})
}

// A stored filter that does not parse (validation makes it impossible; an older or newer
// release might) never blocks the change: the endpoint takes the event, and the warning
// names the endpoint, never the payload.
func TestUnreadableFilterLetsEventsThrough(t *testing.T) {
	var logged bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		logged.Reset()
		broken := newFilteredEndpoint(t, db, "https://broken.example/h", `{"account.Name":{"$regex":"^Glo"}}`)
		ev := newAccountEvent(t, db)
		if d := deliveriesByEndpoint(t, db, ev.ID)[broken.ID]; d.Status != models.EventPending || len(storedFiltered(t, db, ev.ID)) != 0 {
			t.Fatalf("delivery %+v, filtered %v; want a pending delivery and nothing filtered", d, storedFiltered(t, db, ev.ID))
		}
		if out := logged.String(); !strings.Contains(out, broken.ID) || strings.Contains(out, "Globex") || strings.Contains(out, ev.ID) {
			t.Fatalf("log %q: want the endpoint named, no payload", out)
		}
	})
}
