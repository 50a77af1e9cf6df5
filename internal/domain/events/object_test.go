package events

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/revops/revops/models"
)

// CONTRACT §26: the event object and its delivery objects carry the event's sequence
// (null for an event written before the release that added it), and a delivery the
// event's id it waits behind in its lane (null when it is not waiting).
func TestObjectShowsSequenceAndWaitingFor(t *testing.T) {
	four := int64(4)
	ev := models.Event{ID: "e4", Type: "deal-updated", Payload: `{}`, Sequence: &four}
	e := assemble(ev, nil, []models.WebhookDelivery{
		{ID: "d1", EndpointID: "ordered", Status: models.EventPending, Sequence: &four, WaitingFor: "e3"},
		{ID: "d2", EndpointID: "unordered", Status: models.EventDelivered},
	})
	got := render(t, ToObject(e, Links{}))
	for _, want := range []string{
		`"object_type":"","sequence":4,`,
		`{"id":"d1","endpoint_id":"ordered","status":"pending","sequence":4,"waiting_for":"e3","attempts":[]}`,
		// A delivery with no copy of the sequence shows its event's.
		`{"id":"d2","endpoint_id":"unordered","status":"delivered","sequence":4,"waiting_for":null,"attempts":[]}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("object %s\nlacks %s", got, want)
		}
	}
	ev.Sequence = nil
	got = render(t, ToObject(assemble(ev, nil, []models.WebhookDelivery{{ID: "d1", Status: models.EventDelivered}}), Links{}))
	for _, want := range []string{`"sequence":null,"environment"`, `"status":"delivered","sequence":null,"waiting_for":null,`} {
		if !strings.Contains(got, want) {
			t.Errorf("object of an event before §26 %s\nlacks %s", got, want)
		}
	}
}

func render(t *testing.T, o Object) string {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
