package dispatch

import (
	"slices"
	"testing"

	"github.com/revops/revops/models"
)

// A claim's starts are made one event of each environment in turn, in the claim's order
// of environments, so that the first claimStarts at once are spread over all of them.
func TestInterleave(t *testing.T) {
	var events []models.Event
	for _, e := range []string{"c1", "c2", "c3", "a1", "b1", "b2"} {
		events = append(events, models.Event{ID: e, EnvironmentID: e[:1]})
	}
	var got []string
	for _, e := range interleave(events) {
		got = append(got, e.ID)
	}
	if want := []string{"c1", "a1", "b1", "c2", "b2", "c3"}; !slices.Equal(got, want) {
		t.Fatalf("interleaved %v, want %v", got, want)
	}
}
