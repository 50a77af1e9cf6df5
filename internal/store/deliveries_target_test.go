package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// DeliveryForAttempt reads in one query exactly what the three queries it replaced read:
// every field of the delivery, its event and its endpoint; no endpoint once it is
// deleted or when it belongs to another environment; ErrNotFound, with the same message,
// when the delivery or its event is gone.
func TestDeliveryForAttemptReadsAsTheThreeQueriesDid(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		now := time.Now().UTC().Truncate(time.Second)
		full := newEndpoint(t, db, "https://full.example/h", []string{"account-created"}, true)
		disabled := newEndpoint(t, db, "https://off.example/h", nil, true)
		deleted := newEndpoint(t, db, "https://gone.example/h", nil, true)
		// Every nullable or defaulted column holds a value, so that a column left unread
		// shows as a difference below.
		exec(t, db, `UPDATE webhook_endpoints SET description = 'billing', disabled_reason = 'failing',
				failing_since = ?, previous_secret = 'whsec_old', previous_until = ?, filter = '{"account.Name":"Globex"}',
				rate_limit = 5, rate_period = '1s' WHERE id = ?`, now, now.Add(time.Hour), full.ID)
		headers := webhook.HeaderChanges{Set: map[string]string{"X-Api-Key": "k"}} // through the model: its serializer
		if _, err := webhook.UpdateEndpoint(ctx, db.st, db.env, full.ID, webhook.EndpointPatch{Headers: &headers}, now, idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}
		ev := newAccountEvent(t, db)
		exec(t, db, `UPDATE events SET dispatched_at = ?, redispatch_at = ?, workflow_id = 'webhook-x', run_id = 'run-x',
				trace_parent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
				redispatch_trace_parent = '00-5bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
				filtered_endpoint_ids = '["00000000-0000-4000-8000-000000000009"]' WHERE id = ?`,
			now, now, ev.ID)
		exec(t, db, `UPDATE webhook_deliveries SET status = ?, last_error = 'status 500', replays = 2,
				ordered = TRUE, waiting_for = 'event-x' WHERE event_id = ?`, models.EventRetrying, ev.ID)
		off := false
		if _, err := webhook.UpdateEndpoint(ctx, db.st, db.env, disabled.ID, webhook.EndpointPatch{Enabled: &off}, now, idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}
		if _, err := webhook.DeleteEndpoint(ctx, db.st, db.env, deleted.ID, idempotency.Reply[webhook.DeletedEndpoint]{}); err != nil {
			t.Fatal(err)
		}
		// The event's sequence and its deliveries' copies (CONTRACT §26), where the store
		// has not numbered the event itself.
		exec(t, db, `UPDATE events SET sequence = COALESCE(sequence, 3) WHERE id = ?`, ev.ID)
		exec(t, db, `UPDATE webhook_deliveries SET sequence = COALESCE(sequence, 3),
				object_id = CASE WHEN object_id = '' THEN 'acct-x' ELSE object_id END WHERE event_id = ?`, ev.ID)
		byEndpoint := deliveriesByEndpoint(t, db, ev.ID)

		sandbox, err := db.st.Environment(ctx, db.env.OrganizationID, models.EnvSandbox)
		if err != nil {
			t.Fatal(err)
		}
		foreign := newEndpoint(t, seeded{st: db.st, env: sandbox}, "https://sandbox.example/h", nil, true)
		foreignDelivery := insertDelivery(t, db, ev.ID, foreign.ID, models.EventPending)
		orphan := insertDelivery(t, db, uuid.NewString(), full.ID, models.EventPending)

		cases := []struct {
			name, id     string
			wantEndpoint string // "" for none
			wantErr      bool
		}{
			{"endpoint with every field set", byEndpoint[full.ID].ID, full.ID, false},
			{"endpoint disabled", byEndpoint[disabled.ID].ID, disabled.ID, false},
			{"endpoint deleted", byEndpoint[deleted.ID].ID, "", false},
			{"endpoint of another environment", foreignDelivery, "", false},
			{"event gone", orphan, "", true},
			{"no such delivery", uuid.NewString(), "", true},
		}
		for _, tc := range cases {
			want, wantErr := db.st.DeliveryForAttemptThreeQueriesForTest(ctx, tc.id)
			got, err := db.st.DeliveryForAttempt(ctx, tc.id)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || errors.Is(err, apperr.ErrNotFound) != tc.wantErr {
				t.Errorf("%s: error %v, the three queries gave %v", tc.name, err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, want)
			}
			if ep := endpointID(got.Endpoint); ep != tc.wantEndpoint {
				t.Errorf("%s: endpoint %q, want %q", tc.name, ep, tc.wantEndpoint)
			}
			if tc.name == cases[0].name {
				allFieldsSet(t, got.Delivery)
				allFieldsSet(t, got.Event)
				allFieldsSet(t, *got.Endpoint)
			}
		}
	})
}

func exec(t *testing.T, db seeded, sql string, args ...any) {
	t.Helper()
	if err := db.st.ExecForTest(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// insertDelivery writes a delivery of eventID to endpointID as given, bypassing the
// rules that would refuse it (a foreign endpoint, a missing event).
func insertDelivery(t *testing.T, db seeded, eventID, endpointID, status string) string {
	t.Helper()
	id := uuid.NewString()
	exec(t, db, `INSERT INTO webhook_deliveries (id, event_id, environment_id, endpoint_id, status,
		retry_initial_interval_ms, retry_backoff_coefficient, retry_maximum_interval_ms, retry_maximum_attempts, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, 1000, 1.0, 1000, 1, ?, ?)`,
		id, eventID, db.env.ID, endpointID, status, time.Now().UTC(), time.Now().UTC())
	return id
}

func endpointID(ep *models.WebhookEndpoint) string {
	if ep == nil {
		return ""
	}
	return ep.ID
}

// allFieldsSet fails for every zero field of the struct v (embedded structs included).
func allFieldsSet(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v)
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		if tag := rv.Type().Field(i).Tag.Get("gorm"); tag == "-" || strings.HasPrefix(tag, "-:") {
			continue // not a column
		}
		if f.Kind() == reflect.Struct && rv.Type().Field(i).Anonymous {
			allFieldsSet(t, f.Interface())
			continue
		}
		if f.IsZero() {
			t.Errorf("%T.%s is zero: the test cannot show that it is carried through", v, rv.Type().Field(i).Name)
		}
	}
}
