package isolate_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/platform/isolate"
	"github.com/revops/revops/internal/platform/metrics/metricstest"
)

func panicWith(v any) func() error {
	return func() error { panic(v) }
}

// A panic becomes a *Panic that names where it happened and its kind, never its value
// (which may be a tenant's payload), with the frames down to the panicking function; it
// is counted under where. An error or a nil from fn passes through untouched.
func TestCallRecoversWithoutTheValue(t *testing.T) {
	const where = "isolate_test"
	before := metricstest.Scrape(t).Value(t, `revops_panics_recovered_total{where="`+where+`"}`)

	err := isolate.Call(where, panicWith("card 4242 4242 4242 4242 of acct-secret"))
	var p *isolate.Panic
	if !errors.As(err, &p) || p.Where != where {
		t.Fatalf("Call = %v, want a *Panic in %s", err, where)
	}
	if strings.Contains(err.Error(), "4242") || strings.Contains(p.Stack, "4242") || p.Kind != "panic value of type string" {
		t.Fatalf("the panic's value leaked: %q, %q", err, p.Kind)
	}
	if first, _, _ := strings.Cut(p.Stack, "\n"); !strings.Contains(first, "panicWith") {
		t.Errorf("the stack does not begin at the panicking function:\n%s", p.Stack)
	}

	var m map[string]int
	err = isolate.Call(where, func() error { m["x"]++; return nil }) // a nil map write: a runtime error
	if !errors.As(err, &p) || !strings.HasPrefix(p.Kind, "assignment to entry in nil map") {
		t.Fatalf("runtime error: %v (kind %q)", err, p.Kind)
	}

	plain := errors.New("plain")
	if err := isolate.Call(where, func() error { return plain }); err != plain {
		t.Fatalf("an error passed as %v", err)
	}
	if err := isolate.Call(where, func() error { return nil }); err != nil {
		t.Fatalf("no error passed as %v", err)
	}
	if got := metricstest.Scrape(t).Value(t, `revops_panics_recovered_total{where="`+where+`"}`) - before; got != 2 {
		t.Fatalf("%v panics counted, want 2", got)
	}
}

func TestBackoff(t *testing.T) {
	for strikes, want := range map[int]time.Duration{
		0: time.Second, 1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 6: 32 * time.Second,
		7: time.Minute, 100: time.Minute,
	} {
		if got := isolate.Backoff(strikes, isolate.First, isolate.Limit); got != want {
			t.Errorf("Backoff(%d) = %v, want %v", strikes, got, want)
		}
	}
}
