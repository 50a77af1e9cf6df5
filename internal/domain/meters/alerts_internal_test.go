package meters

import (
	"testing"

	"github.com/revops/revops/models"
)

// An alert's group is compared by canonical text, as the series' group values are kept;
// an alert the consumer cannot read watches nothing rather than failing its turns.
func TestWatchOfGroups(t *testing.T) {
	m := &models.Meter{GroupBy: []string{"region", "plan"}}
	one, eu := "1", "eu"
	for _, tc := range []struct {
		group, threshold string
		ok               bool
		vals             []*string
		watches          bool
	}{
		{"{}", "10", true, []*string{&eu, nil}, true},
		{`{"region":1.0}`, "10", true, []*string{&one, nil}, true},
		{`{"region":"1"}`, "10", true, []*string{&eu, nil}, false},
		{`{"plan":null}`, "10", true, []*string{&eu, nil}, true},
		{`{"plan":"pro"}`, "10", true, []*string{&eu, nil}, false},
		{`{"tier":"x"}`, "10", false, nil, false},
		{"{}", "ten", false, nil, false},
		{"[", "10", false, nil, false},
	} {
		w, ok := watchOf(models.MeterAlert{Group: tc.group, Threshold: tc.threshold}, m)
		if ok != tc.ok || (ok && w.watches("a", tc.vals) != tc.watches) {
			t.Errorf("group %s threshold %s: ok %v, want %v (watches %v)", tc.group, tc.threshold, ok, tc.ok, tc.watches)
		}
	}
}
