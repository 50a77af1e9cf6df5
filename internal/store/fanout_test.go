package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"github.com/revops/revops/models"
)

// A change returns each of its events with what its transaction wrote for it (the
// starter's Fanout): the deliveries in the order EventDeliveries reads them back, each
// with its endpoint's destination and no secret; an event nobody takes has an empty one.
func TestChangeEventsCarryTheirFanout(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		if ev := newAccountEvent(t, db); ev.Fanout == nil || len(ev.Fanout.Deliveries) != 0 || len(ev.Fanout.Destinations) != 0 {
			t.Fatalf("skipped event's fanout %+v, want an empty one", ev.Fanout)
		}
		start := time.Now().UTC()
		eps := map[string]models.WebhookEndpoint{}
		for i, u := range []string{"https://a.example/h", "https://b.example/h", "https://c.example/h", "https://d.example/h", "https://e.example/h"} {
			ep := newEndpointAt(t, db, u, nil, true, start.Add(time.Duration(i)*time.Millisecond))
			eps[ep.ID] = ep
		}
		newEndpoint(t, db, "https://off.example/h", nil, false)
		newEndpoint(t, db, "https://deals.example/h", []string{"deal-signed"}, true)

		ev := newAccountEvent(t, db)
		read, err := db.st.EventDeliveries(ctx, db.env, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		f := ev.Fanout
		if f == nil || len(f.Deliveries) != 5 || len(f.Destinations) != 5 || len(read) != 5 {
			t.Fatalf("fanout %+v, read %d deliveries; want the 5 enabled subscribed endpoints", f, len(read))
		}
		for i, d := range f.Deliveries {
			r := read[i]
			if d.ID != r.ID || d.EndpointID != r.EndpointID || d.Status != r.Status || d.RetryPolicy != r.RetryPolicy || d.EventID != ev.ID {
				t.Errorf("delivery %d = %+v, the database lists %+v", i, d, r)
			}
			ep := eps[d.EndpointID]
			if want := (models.Destination{EndpointID: ep.ID, URL: ep.URL, Method: ep.Method, Enabled: true}); f.Destinations[i] != want {
				t.Errorf("destination %d = %+v, want %+v", i, f.Destinations[i], want)
			}
		}
	})
}

// The fanout lives in memory only: an event's JSON is the same with or without it, and
// GORM writes the same statement for it, creates and saves no delivery through it.
func TestFanoutIsNeverPersistedNorRendered(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		ep := newEndpoint(t, db, "https://user:pw@hook.example/h?token=tok", nil, true)
		ev := newAccountEvent(t, db)
		if ev.Fanout == nil || len(ev.Fanout.Deliveries) != 1 {
			t.Fatalf("fanout %+v, want one delivery", ev.Fanout)
		}
		bare := ev
		bare.Fanout = nil

		with, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		without, _ := json.Marshal(bare)
		if string(with) != string(without) {
			t.Fatalf("JSON with fanout %s\nwithout %s", with, without)
		}
		for _, leak := range []string{"Fanout", "Destination", ev.Fanout.Deliveries[0].ID, "hook.example", ep.Secret} {
			if strings.Contains(string(with), leak) {
				t.Errorf("event JSON holds %q: %s", leak, with)
			}
		}

		raw := openRaw(t, db.name, db.url)
		dry := raw.Session(&gorm.Session{DryRun: true})
		copyOf := func(e models.Event, id string) models.Event {
			e.ID = id
			return e
		}
		id := uuid.NewString()
		for op, write := range map[string]func(*gorm.DB, *models.Event) *gorm.DB{
			"create": func(db *gorm.DB, e *models.Event) *gorm.DB { return db.Create(e) },
			"save":   func(db *gorm.DB, e *models.Event) *gorm.DB { return db.Save(e) },
		} {
			a, b := copyOf(ev, id), copyOf(bare, id)
			sa, sb := write(dry, &a).Statement, write(dry, &b).Statement
			if sa.SQL.String() != sb.SQL.String() || len(sa.Vars) != len(sb.Vars) {
				t.Errorf("%s with fanout: %s %d vars; without: %s %d vars", op, sa.SQL.String(), len(sa.Vars), sb.SQL.String(), len(sb.Vars))
			}
		}
		before := countDeliveries(t, raw)
		stored := copyOf(ev, id)
		stored.Fanout.Deliveries = []models.WebhookDelivery{{ID: uuid.NewString(), EventID: id, EnvironmentID: db.env.ID,
			EndpointID: ep.ID, Status: models.EventPending, RetryPolicy: models.DefaultRetryPolicy, CreatedAt: ev.CreatedAt, UpdatedAt: ev.CreatedAt}}
		if err := raw.WithContext(ctx).Create(&stored).Error; err != nil {
			t.Fatalf("create event carrying a fanout: %v", err)
		}
		stored.Status = models.EventDelivered
		if err := raw.WithContext(ctx).Save(&stored).Error; err != nil {
			t.Fatalf("save event carrying a fanout: %v", err)
		}
		if after := countDeliveries(t, raw); after != before {
			t.Fatalf("writing an event carrying a fanout wrote deliveries: %d → %d", before, after)
		}
		back, _, err := db.st.EventByID(ctx, id)
		if err != nil || back.Fanout != nil || back.Status != models.EventDelivered {
			t.Fatalf("event read back: %+v %v", back, err)
		}
	})
}

func countDeliveries(t *testing.T, db *gorm.DB) int64 {
	t.Helper()
	var n int64
	if err := db.Model(&models.WebhookDelivery{}).Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}
