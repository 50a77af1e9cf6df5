// Package noisyload is the shared half of the noisy-neighbour measurement of issue 20
// (docs/benchmarks.md, "Noisy neighbour, full size"): an HTTPS receiver that holds every
// request before acknowledging it, an open-load schedule, and the phase runner and table
// that the dev shape (internal/testkit/e2e) and the production shape (internal/testkit/prodlike) share.
// Only tests import it; it measures, it checks nothing.
package noisyload

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// EnvVar opts in: the measurement takes minutes and holds thousands of connections.
const EnvVar = "REVOPS_MEASURE_NOISY"

// SlotsVar is the worker's activity slots (CONTRACT §17), passed through when set.
const SlotsVar = "REVOPS_WORKER_ACTIVITY_SLOTS"

// AckSentence is what A's receiver answers (the default service name's sentence).
const AckSentence = "Revops API Event Received."

// Settings are the scenario's sizes: the by default, each overridable (for a
// quick look only; the figures in docs/benchmarks.md are taken with the defaults).
type Settings struct {
	Duration  time.Duration // of each phase's load: REVOPS_NOISY_SECONDS, 60
	Hold      time.Duration // A's receiver holds each request: REVOPS_NOISY_HOLD, 25s
	ARate     float64       // A's changes per second: REVOPS_NOISY_A_RATE, 4
	BRate     float64       // B's changes per second: 1
	Endpoints int           // A's endpoints: 16 (the most an environment may have)
	// Wait bounds how long after its phase's load B's last delivery may take; a B change
	// not delivered by then counts as missing: REVOPS_NOISY_WAIT, 4m.
	Wait time.Duration
}

// FromEnv returns the sizes, with the overrides above.
func FromEnv() Settings {
	s := Settings{Duration: time.Minute, Hold: 25 * time.Second, ARate: 4, BRate: 1, Endpoints: 16, Wait: 4 * time.Minute}
	if v, err := strconv.Atoi(os.Getenv("REVOPS_NOISY_SECONDS")); err == nil && v > 0 {
		s.Duration = time.Duration(v) * time.Second
	}
	if v, err := time.ParseDuration(os.Getenv("REVOPS_NOISY_HOLD")); err == nil && v >= 0 {
		s.Hold = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("REVOPS_NOISY_A_RATE"), 64); err == nil && v > 0 {
		s.ARate = v
	}
	if v, err := time.ParseDuration(os.Getenv("REVOPS_NOISY_WAIT")); err == nil && v > 0 {
		s.Wait = v
	}
	return s
}

// Slots describes the worker's activity slots for the table.
func Slots() string {
	if v := os.Getenv(SlotsVar); v != "" {
		return SlotsVar + "=" + v
	}
	return SlotsVar + " unset (the code's default; main: worker.Options{}, 1000)"
}

// HoldReceiver is organization A's receiver: it holds every request Hold, then answers
// 200 with the acknowledgement sentence, so A's endpoints never fail and are never
// disabled. Release answers every held request at once (and any later one), so that
// the end of a measurement never waits for a held request.
type HoldReceiver struct {
	*httptest.Server
	hold    time.Duration
	release chan struct{}
	once    sync.Once

	arrived, acked, held, peak atomic.Int64
	cut                        atomic.Int64 // the sender gave up before the hold ended
	mu                         sync.Mutex
	arrivedAt, ackAt           []time.Time // arrivals; acknowledgements after a full hold
}

// NewHoldReceiver starts the receiver (HTTPS, httptest's certificate).
func NewHoldReceiver(hold time.Duration) *HoldReceiver {
	h := &HoldReceiver{hold: hold, release: make(chan struct{})}
	h.Server = httptest.NewUnstartedServer(http.HandlerFunc(h.serve))
	h.Config.ErrorLog = log.New(io.Discard, "", 0)
	h.StartTLS()
	return h
}

func (h *HoldReceiver) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	h.arrived.Add(1)
	h.mu.Lock()
	h.arrivedAt = append(h.arrivedAt, time.Now())
	h.mu.Unlock()
	n := h.held.Add(1)
	for p := h.peak.Load(); n > p && !h.peak.CompareAndSwap(p, n); p = h.peak.Load() {
	}
	defer h.held.Add(-1)
	t := time.NewTimer(h.hold)
	defer t.Stop()
	full := false
	select {
	case <-t.C:
		full = true
	case <-h.release:
	case <-r.Context().Done():
		h.cut.Add(1)
		return
	}
	_, _ = io.WriteString(w, AckSentence)
	if full {
		h.acked.Add(1)
		h.mu.Lock()
		h.ackAt = append(h.ackAt, time.Now())
		h.mu.Unlock()
	}
}

// Release answers every held request now and every later one at once, then closes the
// server. Idempotent.
func (h *HoldReceiver) Release() {
	h.once.Do(func() {
		close(h.release)
		h.CloseClientConnections()
		h.Close()
	})
}

// Counts are the receiver's totals so far.
type Counts struct {
	Arrived, Acked, Held, Peak, Cut int64
}

func (h *HoldReceiver) Counts() Counts {
	return Counts{Arrived: h.arrived.Load(), Acked: h.acked.Load(), Held: h.held.Load(), Peak: h.peak.Load(), Cut: h.cut.Load()}
}

// AckedBetween counts the full-hold acknowledgements in [from, to).
func (h *HoldReceiver) AckedBetween(from, to time.Time) int { return h.between(&h.ackAt, from, to) }

// ArrivedBetween counts the requests that arrived in [from, to).
func (h *HoldReceiver) ArrivedBetween(from, to time.Time) int {
	return h.between(&h.arrivedAt, from, to)
}

func (h *HoldReceiver) between(times *[]time.Time, from, to time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, at := range *times {
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return n
}

// ResetPeak starts a new peak count (each phase reports its own).
func (h *HoldReceiver) ResetPeak() { h.peak.Store(h.held.Load()) }

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

// Table prints the phases' figures, one row each, with the load average.
func Table(s Settings, rows []Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "noisy neighbour (issue 20): A %g changes/s × %d endpoints held %s, B %g change/s, %s per phase; %s\n",
		s.ARate, s.Endpoints, s.Hold, s.BRate, s.Duration, Slots())
	fmt.Fprintf(&b, "%-6s %-7s %5s %9s %9s %9s %4s %4s %9s | %6s %9s %9s %9s %9s %7s | %s\n",
		"shape", "phase", "B n", "B p50", "B p90", "B max", ">1s", "miss", "B api p90",
		"A sent", "A api p90", "A arr/s", "A ack/s", "ack/s ph", "A peak", "load before → after")
	for _, r := range rows {
		maxs := ms(r.B.Max)
		if r.B.Missing > 0 {
			maxs = "> " + maxs
		}
		aCols := fmt.Sprintf("%6s %9s %9s %9s %9s %7s", "-", "-", "-", "-", "-", "-")
		if r.ASent > 0 {
			aCols = fmt.Sprintf("%6d %9s %9.1f %9.1f %9.1f %7d", r.ASent, ms(r.AAnswer.P90),
				float64(r.AArrivedLoad)/r.Load.Seconds(), float64(r.AAckedLoad)/r.Load.Seconds(),
				float64(r.AAckedPhase)/r.Phase.Seconds(), r.APeakHeld)
		}
		fmt.Fprintf(&b, "%-6s %-7s %5d %9s %9s %9s %4d %4d %9s | %s | %s → %s\n",
			r.Shape, r.Name, r.B.N, ms(r.B.P50), ms(r.B.P90), maxs, r.B.OverSecond, r.B.Missing, ms(r.BAnswer.P90),
			aCols, r.LoadBefore, r.LoadAfter)
		if r.BErrors > 0 || r.AErrors > 0 || r.ACut > 0 {
			fmt.Fprintf(&b, "       (%s: %d B and %d A API requests failed; %d of A's deliveries cut by the sender before the hold ended)\n",
				r.Name, r.BErrors, r.AErrors, r.ACut)
		}
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%s %s, B's latencies ascending:", r.Shape, r.Name)
		for _, l := range r.B.Sorted {
			b.WriteString(" " + ms(l))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "B p50/p90/max: B's API answer → B's receiver (>1s: how many took longer); A arr/s: A's deliveries arriving at its receiver per s during the load; "+
		"A ack/s: acknowledged after the full hold, per s of the load (ack/s ph: per s of the whole phase, until B's last delivery); A peak: most requests held at once\n")
	return b.String()
}

func ms(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
}

// Loadavg is the 1-, 5- and 15-minute load average.
func Loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}
