package events

import (
	"testing"

	"github.com/revops/revops/models"
)

// Each delivery gets the attempts that name it, in order; the event keeps them all, and
// those of no delivery (the single-endpoint releases') are Unassigned.
func TestAssembleGroupsAttemptsByDelivery(t *testing.T) {
	ds := []models.WebhookDelivery{{ID: "d1"}, {ID: "d2"}}
	as := []models.DeliveryAttempt{{ID: "a1", DeliveryID: "d2"}, {ID: "a2"}, {ID: "a3", DeliveryID: "d2"}, {ID: "a4", DeliveryID: "d1"}}
	e := assemble(models.Event{ID: "e"}, as, ds)
	if len(e.Attempts) != 4 || len(e.Deliveries) != 2 {
		t.Fatalf("event = %+v", e)
	}
	ids := func(as []models.DeliveryAttempt) (out []string) {
		for _, a := range as {
			out = append(out, a.ID)
		}
		return out
	}
	if got := ids(e.Deliveries[0].Attempts); len(got) != 1 || got[0] != "a4" {
		t.Errorf("d1 attempts = %v, want [a4]", got)
	}
	if got := ids(e.Deliveries[1].Attempts); len(got) != 2 || got[0] != "a1" || got[1] != "a3" {
		t.Errorf("d2 attempts = %v, want [a1 a3]", got)
	}
	if got := ids(e.Unassigned()); len(got) != 1 || got[0] != "a2" {
		t.Errorf("unassigned = %v, want [a2]", got)
	}
}
