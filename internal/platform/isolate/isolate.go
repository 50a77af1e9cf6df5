// Package isolate keeps one tenant's failing work from taking the others' turns (CONTRACT
// §17, §21): a panic in a unit of work (a meter consumer turn, a job's page, a workflow
// start) becomes an error of that unit alone, and work that keeps failing is set aside
// for a growing while (Backoff) instead of being tried again at every turn.
package isolate

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/revops/revops/internal/platform/metrics"
)

// Panic is a panic recovered by Call. Its text says where it happened and what kind of
// panic it was, never the panic's value (which may hold a tenant's payload or a secret):
// it may reach logs, and Temporal histories through an activity's error.
type Panic struct {
	Where string // the unit of work: one of a fixed set of names, the metric's label
	Kind  string // a runtime error's text ("runtime error: index out of range …"), else the value's Go type
	Stack string // the panicking goroutine's frames (function and file:line, without arguments)
}

func (p *Panic) Error() string { return "panic in " + p.Where + ": " + p.Kind }

// Call runs fn and returns its error; a panic in fn is recovered, counted in
// revops_panics_recovered_total{where} and returned as a *Panic. where names the unit of
// work from a fixed set (a metric label: never a tenant's name or id). Whatever fn had
// open is the caller's to undo (a transaction rolls back as the panic leaves it).
func Call(where string, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			metrics.PanicRecovered(where)
			err = &Panic{Where: where, Kind: kind(v), Stack: stack()}
		}
	}()
	return fn()
}

// kind describes a panic value without its content: the runtime's own errors carry no
// data of ours (an index, a type), anything else (a string, an error built from input)
// may.
func kind(v any) string {
	if re, ok := v.(runtime.Error); ok {
		return re.Error()
	}
	return fmt.Sprintf("panic value of type %T", v)
}

// stack lists the frames of the goroutine that panicked, from the panic's point down,
// with no argument values (runtime/debug.Stack prints them, and they may be data).
func stack() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(4, pcs) // runtime.Callers, stack, Call's deferred func, runtime.gopanic
	frames := runtime.CallersFrames(pcs[:n])
	var b strings.Builder
	for {
		f, more := frames.Next()
		fmt.Fprintf(&b, "%s\n\t%s:%d\n", f.Function, f.File, f.Line)
		if !more {
			return b.String()
		}
	}
}

// Backoff is how long work that failed strikes times in a row is set aside: first,
// doubling with each strike, at most limit (the shape of the RetryPolicies of the jobs'
// activities, so a failing start or consumer turn is retried at the pace of a failing
// page).
func Backoff(strikes int, first, limit time.Duration) time.Duration {
	d := first
	for i := 1; i < strikes && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// First and Limit are the backoff the callers use: 1 s, then 2, 4, … up to a minute.
const (
	First = time.Second
	Limit = time.Minute
)
