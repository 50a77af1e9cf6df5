package noisyload

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

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
