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

// TestStepsCountBytes: a comparison costs a step, and one more per BytesPerStep bytes it
// may examine: a string operand's, a number's digits, a member's or a path segment's name.
func TestStepsCountBytes(t *testing.T) {
	s64 := strings.Repeat("x", 64)
	for raw, want := range map[string]int{
		`{"a":"` + s64 + `"}`:                                1 + 1 + 1 + 64/BytesPerStep,
		`{"` + s64 + `":1}`:                                  1 + 1 + 64/BytesPerStep + 1,
		`{"a":{"$lt":"` + s64 + `"}}`:                        1 + 1 + 1 + 64/BytesPerStep,
		`{"a":{"$gte":-1234567890.1234567890123456789}}`:     1 + 1 + 1 + 29/BytesPerStep,
		`{"a":{"$in":["` + s64 + `",1e3]}}`:                  1 + 1 + 1 + (1 + 64/BytesPerStep) + 1,
		`{"a":{"$eq":{"` + s64 + `":[true,"` + s64 + `"]}}}`: 1 + 1 + 1 + 64/BytesPerStep + 1 + 1 + 1 + 64/BytesPerStep,
	} {
		f, err := Parse([]byte(raw))
		if err != nil {
			t.Fatal(raw, err)
		}
		if f.Steps() != want {
			t.Errorf("%.50s: %d steps, want %d", raw, f.Steps(), want)
		}
	}
}

// TestEvaluationSpendsWhatItExamines: at run time a comparison spends the bytes it really
// examines, within what Parse counted: strings of another length differ at once, equal
// lengths are compared in full, numbers digit by digit.
func TestEvaluationSpendsWhatItExamines(t *testing.T) {
	long := strings.Repeat("x", 160)
	f, err := Parse([]byte(`{"a":{"$in":["` + long + `","` + long + `"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	for payload, want := range map[string]int{
		`{"a":"` + long + `y"}`:                 1 + 1 + 1 + 1,                  // path, $in, two items of another length
		`{"a":"` + long[1:] + `y"}`:             1 + 1 + 2*(1+160/BytesPerStep), // same length: examined
		`{"a":` + strings.Repeat("7", 64) + `}`: 1 + 1 + 1 + 1,                  // a number never equals a string
	} {
		doc, err := NewReader(f).Decode([]byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		_, steps, err := f.eval(doc)
		if err != nil || steps != want || steps > f.Steps() {
			t.Errorf("%.40s: %d steps (%v), want %d within %d", payload, steps, err, want, f.Steps())
		}
	}
}

// TestSetLookupSpends: a long $in list is one lookup: a step, and the bytes hashed when an
// item has the value's length (a longer payload string is not hashed at all).
func TestSetLookupSpends(t *testing.T) {
	long := strings.Repeat("x", 160)
	items := `"` + long + `",1.5,-2e3,true,null,[1],{"k":1}`
	for i := range minSetItems {
		items += `,"item` + strings.Repeat("y", i) + `"`
	}
	f, err := Parse([]byte(`{"a":{"$in":[` + items + `]}}`))
	if err != nil {
		t.Fatal(err)
	}
	for payload, want := range map[string]struct {
		ok    bool
		steps int
	}{
		`{"a":"` + long + `"}`:                       {true, 1 + 1 + 1 + 160/BytesPerStep},
		`{"a":"` + strings.Repeat("x", 1<<16) + `"}`: {false, 1 + 1 + 1},
		`{"a":"itemyyy"}`:                            {true, 1 + 1 + 1},
		`{"a":-2000.0}`:                              {true, 1 + 1 + 1},
		`{"a":1.50}`:                                 {true, 1 + 1 + 1},
		`{"a":1.51}`:                                 {false, 1 + 1 + 1},
		`{"a":false}`:                                {false, 1 + 1 + 1},
		`{"a":null}`:                                 {true, 1 + 1 + 1},
		`{"a":{"k":1.0}}`:                            {true, 1 + 1 + 1 + 1 + 1}, // [1] is not an object; {"k":1}: the object, its member
		`{"a":[` + strings.Repeat("1,", 100) + `1]}`: {false, 1 + 1 + 1 + 1}, // each container: its length differs at once
	} {
		ok, steps, err := f.eval(mustDoc(t, f, []byte(payload)))
		if err != nil || ok != want.ok || steps != want.steps || steps > f.Steps() {
			t.Errorf("%.40s: %v in %d steps (%v), want %v in %d within %d", payload, ok, steps, err, want.ok, want.steps, f.Steps())
		}
	}
}

// TestEvaluationBound: an evaluation stops at MaxSteps whatever Parse counted. Parse
// refuses every filter that could get there, so the filter is parsed here past its
// bounds: an $in of one-item arrays, each compared (two steps: the array, its item); it
// is cut off with ErrTooCostly, and the one just within the bound is not.
func TestEvaluationBound(t *testing.T) {
	lim := limits{bytes: 1 << 20, depth: MaxDepth, items: 1 << 20, steps: 1 << 30}
	in := func(n int) *Filter {
		f, err := parse([]byte(`{"a":{"$in":[`+strings.TrimSuffix(strings.Repeat("[0],", n), ",")+`]}}`), lim)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	payload := []byte(`{"a":[1]}`)
	within := in((MaxSteps - 2) / 2) // the path's step, $in's, and two per item
	if ok, steps, err := within.eval(mustDoc(t, within, payload)); err != nil || ok || steps != MaxSteps {
		t.Fatalf("at the bound: %v, %d steps, %v", ok, steps, err)
	}
	past := in((MaxSteps-2)/2 + 1)
	if _, _, err := past.eval(mustDoc(t, past, payload)); err != ErrTooCostly {
		t.Fatalf("past the bound: %v, want ErrTooCostly", err)
	}
}

func mustDoc(t *testing.T, f *Filter, payload []byte) Doc {
	t.Helper()
	d, err := NewReader(f).Decode(payload)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
