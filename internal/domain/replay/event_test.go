package replay

import (
	"errors"
	"slices"
	"testing"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

// The replay's rule (CONTRACT §13, §25): what goes back to pending, what gets a new
// delivery, and what refuses the whole replay.
func TestChoose(t *testing.T) {
	ev := models.Event{ID: "e", Type: "deal-signed"}
	ep := func(id string, enabled bool, types ...string) models.WebhookEndpoint {
		return models.WebhookEndpoint{ID: id, Enabled: enabled, EventTypes: types}
	}
	d := func(id, endpoint, status string) models.WebhookDelivery {
		return models.WebhookDelivery{ID: id, EndpointID: endpoint, Status: status}
	}
	for _, tc := range []struct {
		name       string
		eps        []models.WebhookEndpoint
		ds         []models.WebhookDelivery
		endpointID string
		again      []string
		fresh      []string
		code       string // a ConflictError code that refuses the replay
		notSub     bool
	}{
		{name: "ended deliveries go again", eps: []models.WebhookEndpoint{ep("a", true, "*"), ep("b", false, "*")},
			ds: []models.WebhookDelivery{d("da", "a", models.EventFailed), d("db", "b", models.EventDelivered)}, again: []string{"da", "db"}},
		{name: "one in progress refuses all", eps: []models.WebhookEndpoint{ep("a", true, "*"), ep("b", true, "*")},
			ds: []models.WebhookDelivery{d("da", "a", models.EventFailed), d("db", "b", models.EventRetrying)}, code: CodeDeliveryInProgress},
		{name: "subscribed now and enabled gets one", eps: []models.WebhookEndpoint{ep("a", true, "deal-signed"), ep("c", false, "*"), ep("o", true, "account-created")},
			fresh: []string{"a"}},
		{name: "named disabled endpoint gets one", eps: []models.WebhookEndpoint{ep("c", false, "*")}, endpointID: "c", fresh: []string{"c"}},
		{name: "named endpoint not subscribed", eps: []models.WebhookEndpoint{ep("o", true, "account-created")}, endpointID: "o", notSub: true},
		{name: "named endpoint that had one", eps: []models.WebhookEndpoint{ep("o", true, "account-created")}, endpointID: "o",
			ds: []models.WebhookDelivery{d("do", "o", models.EventSkipped)}, again: []string{"do"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			again, fresh, err := choose(ev, tc.eps, tc.ds, tc.endpointID)
			var ce *apperr.ConflictError
			switch {
			case tc.code != "":
				if !errors.As(err, &ce) || ce.Code != tc.code {
					t.Fatalf("err = %v, want conflict %s", err, tc.code)
				}
				return
			case tc.notSub:
				if !errors.Is(err, ErrEndpointNotSubscribed) {
					t.Fatalf("err = %v, want %v", err, ErrEndpointNotSubscribed)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			var freshIDs []string
			for _, e := range fresh {
				freshIDs = append(freshIDs, e.ID)
			}
			if !slices.Equal(again, tc.again) || !slices.Equal(freshIDs, tc.fresh) {
				t.Fatalf("again %v fresh %v, want %v %v", again, freshIDs, tc.again, tc.fresh)
			}
		})
	}
}
