package webhookfilter

import (
	"strings"
	"testing"
)

// longPath is {"a.a.…":0} with n segments: 1 step for the filter, n for the walk, 1 for
// the value compared.
func longPath(n int) []byte {
	return []byte(`{"` + strings.Repeat("a.", n-1) + `a":0}`)
}

// TestStepBound: MaxSteps holds at and past its bound. No filter within MaxBytes can
// reach it (the cheapest step costs about two bytes), so the size limit is raised here
// to reach it, which is also the case the bound stands for.
func TestStepBound(t *testing.T) {
	lim := contractLimits
	lim.bytes = 1 << 20
	f, err := parse(longPath(MaxSteps-2), lim)
	if err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	if f.Steps() != MaxSteps {
		t.Fatalf("steps = %d, want %d", f.Steps(), MaxSteps)
	}
	_, err = parse(longPath(MaxSteps-1), lim)
	if fe, ok := err.(*Fault); !ok || fe.Pointer != "filter" || !strings.Contains(fe.Message, "more than 10000 evaluation steps") {
		t.Fatalf("past the bound: %v", err)
	}
}

// TestStepsCount: the bound counts what the evaluator may do.
func TestStepsCount(t *testing.T) {
	for raw, want := range map[string]int{
		`{}`:                        1,
		`{"a":1}`:                   3,
		`{"a.b":{"$in":[1,2,3]}}`:   1 + 2 + 1 + 3,
		`{"a":{"$eq":{"b":[1,2]}}}`: 1 + 1 + 4,
		`{"$or":[{"a":1},{"b":{"$gt":1,"$exists":true}}]}`: 1 + 1 + 3 + (1 + 1 + 1 + 1),
		`{"$not":{"a":{"$lt":"z"}}}`:                       1 + 1 + 1 + 1 + 1,
	} {
		f, err := Parse([]byte(raw))
		if err != nil {
			t.Fatal(raw, err)
		}
		if f.Steps() != want {
			t.Errorf("%s: %d steps, want %d", raw, f.Steps(), want)
		}
	}
	// The most a 4 KiB filter can spell with the cheapest step.
	n := (MaxBytes - len(`{"a":0}`)) / 2
	f, err := Parse(longPath(n + 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes: %d steps", len(longPath(n+1)), f.Steps())
}
