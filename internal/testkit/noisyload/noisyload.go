// Package noisyload is the shared half of the noisy-neighbour measurement of issue 20
// (docs/benchmarks.md, "Noisy neighbour, full size"): an HTTPS receiver that holds every
// request before acknowledging it, an open-load schedule, and the phase runner and table
// that the dev shape (internal/testkit/e2e) and the production shape (internal/testkit/prodlike) share.
// Only tests import it; it measures, it checks nothing.
package noisyload

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Open calls do(i) at start + i/rate for every i whose time falls within d, each in its
// own goroutine: open load, a slow answer never delays the next request. It returns the
// number of calls once every call has returned.
func Open(ctx context.Context, start time.Time, rate float64, d time.Duration, do func(i int)) int {
	var wg sync.WaitGroup
	n := 0
	for ; ; n++ {
		at := start.Add(time.Duration(float64(n) / rate * float64(time.Second)))
		if at.Sub(start) >= d {
			break
		}
		select {
		case <-ctx.Done():
			wg.Wait()
			return n
		case <-time.After(time.Until(at)):
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			do(i)
		}(n)
	}
	wg.Wait()
	return n
}

// Phase is what a shape provides for one phase.
type Phase struct {
	Name string // "alone" or "loaded"
	// Key is B's i-th change's key, found by B's receiver in the webhook body.
	Key func(i int) string
	// Expect registers a waiter for key before its change is sent.
	Expect func(key string) <-chan time.Time
	// B makes B's change carrying key and returns once the API answered 2xx.
	B func(ctx context.Context, i int, key string) error
	// A makes A's i-th change (nil: B alone).
	A    func(ctx context.Context, i int) error
	Hold *HoldReceiver // A's receiver
	// Logf reports progress (every 10 s) and errors.
	Logf func(format string, args ...any)
}

// Dist is a latency distribution.
type Dist struct {
	N, Missing    int
	P50, P90, Max time.Duration
	OverSecond    int             // how many took more than 1 s
	Sorted        []time.Duration // every latency, ascending
}

func dist(lats []time.Duration, missing int) Dist {
	d := Dist{N: len(lats), Missing: missing}
	if len(lats) == 0 {
		return d
	}
	slices.Sort(lats)
	at := func(q float64) time.Duration {
		i := int(float64(len(lats))*q+0.999999) - 1
		return lats[max(0, min(i, len(lats)-1))]
	}
	d.P50, d.P90, d.Max = at(0.5), at(0.9), lats[len(lats)-1]
	for _, l := range lats {
		if l > time.Second {
			d.OverSecond++
		}
	}
	d.Sorted = lats
	return d
}

// Result is one phase's figures.
type Result struct {
	Shape, Name string
	B           Dist // API answer → B's receiver
	BAnswer     Dist // B's request sent → API answer
	BErrors     int
	ASent       int
	AErrors     int
	AAnswer     Dist
	// A's deliveries: arrived at A's receiver and acknowledged after a full hold, during
	// the load (Duration) and until the phase ended (B's last delivery, or Wait).
	AArrivedLoad, AAckedLoad, AAckedPhase int
	APeakHeld                             int64
	ACut                                  int64 // A's requests the sender gave up on (timeouts)
	Load, Phase                           time.Duration
	LoadBefore, LoadAfter                 string
}

// Run runs one phase: B at s.BRate and, if p.A is set, A at s.ARate, both open load for
// s.Duration; then it waits until every B change is delivered or s.Wait has passed.
func Run(ctx context.Context, shape string, s Settings, p Phase) Result {
	res := Result{Shape: shape, Name: p.Name, LoadBefore: Loadavg(), Load: s.Duration}
	type bChange struct {
		answered time.Time
		ok       bool
		arrived  <-chan time.Time
	}
	nB := int(s.Duration.Seconds()*s.BRate + 0.5)
	bs := make([]bChange, nB+1)
	var mu sync.Mutex
	var bAnswer, aAnswer []time.Duration
	var aErrs, bErrs atomic.Int64
	var cut0 int64
	if p.Hold != nil {
		p.Hold.ResetPeak()
		cut0 = p.Hold.Counts().Cut
	}
	start := time.Now().Add(100 * time.Millisecond)
	loadEnd := start.Add(s.Duration)
	done := make(chan struct{})
	go progress(p, start, done, func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return len(bAnswer), len(aAnswer)
	})
	var wg sync.WaitGroup
	if p.A != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.ASent = Open(ctx, start, s.ARate, s.Duration, func(i int) {
				t0 := time.Now()
				if err := p.A(ctx, i); err != nil {
					if aErrs.Add(1) <= 3 {
						p.Logf("A change %d: %v", i, err)
					}
					return
				}
				mu.Lock()
				aAnswer = append(aAnswer, time.Since(t0))
				mu.Unlock()
			})
		}()
	}
	sentB := Open(ctx, start, s.BRate, s.Duration, func(i int) {
		key := p.Key(i)
		ch := p.Expect(key)
		t0 := time.Now()
		err := p.B(ctx, i, key)
		at := time.Now()
		if err != nil {
			if bErrs.Add(1) <= 3 {
				p.Logf("B change %d: %v", i, err)
			}
			return
		}
		mu.Lock()
		bs[i] = bChange{answered: at, ok: true, arrived: ch}
		bAnswer = append(bAnswer, at.Sub(t0))
		mu.Unlock()
	})
	wg.Wait()
	var lats []time.Duration
	missing := 0
	deadline := time.NewTimer(time.Until(loadEnd.Add(s.Wait)))
	defer deadline.Stop()
	for i := range sentB {
		b := bs[i]
		if !b.ok {
			continue
		}
		select {
		case at := <-b.arrived:
			lats = append(lats, max(0, at.Sub(b.answered)))
		case <-deadline.C:
			deadline.Reset(0) // the rest: whatever already arrived
			select {
			case at := <-b.arrived:
				lats = append(lats, max(0, at.Sub(b.answered)))
			default:
				missing++
			}
		case <-ctx.Done():
			missing++
		}
	}
	end := time.Now()
	close(done)
	res.Phase = end.Sub(start)
	res.B, res.BAnswer, res.AAnswer = dist(lats, missing), dist(bAnswer, 0), dist(aAnswer, 0)
	res.BErrors, res.AErrors = int(bErrs.Load()), int(aErrs.Load())
	if p.Hold != nil {
		res.AArrivedLoad = p.Hold.ArrivedBetween(start, loadEnd)
		res.AAckedLoad = p.Hold.AckedBetween(start, loadEnd)
		res.AAckedPhase = p.Hold.AckedBetween(start, end)
		c := p.Hold.Counts()
		res.APeakHeld, res.ACut = c.Peak, c.Cut-cut0
	}
	res.LoadAfter = Loadavg()
	return res
}

// progress logs every 10 s: B and A answered so far, A's receiver's counts.
func progress(p Phase, start time.Time, done <-chan struct{}, answered func() (int, int)) {
	tk := time.NewTicker(10 * time.Second)
	defer tk.Stop()
	for {
		select {
		case <-done:
			return
		case <-tk.C:
			b, a := answered()
			line := fmt.Sprintf("%s +%s: B answered %d, A answered %d", p.Name, time.Since(start).Round(time.Second), b, a)
			if p.Hold != nil {
				c := p.Hold.Counts()
				line += fmt.Sprintf("; A's receiver: %d arrived, %d held now (peak %d), %d acknowledged, %d cut", c.Arrived, c.Held, c.Peak, c.Acked, c.Cut)
			}
			p.Logf("%s; load %s", line, Loadavg())
		}
	}
}
