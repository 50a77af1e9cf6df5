package dispatch

import (
	"slices"
	"sync"
	"time"

	"github.com/revops/revops/internal/platform/isolate"
	"github.com/revops/revops/internal/platform/metrics"
)

// maxHolds bounds the starts one starter sets aside at once; past it a failed start is
// not set aside (it is tried again at the next poll or sweep, as before holds existed):
// that many failing on their own means Temporal refuses nearly everything anyway.
const maxHolds = 256

// holds are the starts (deliveries, replays, jobs) whose last start failed, each set
// aside until its backoff has passed: isolate.Backoff of its failures in a row, 1 s
// doubling to a minute (CONTRACT §17: a start that always fails fails only itself, and
// is not tried again at every poll). They live in the starter's memory: each process
// sets aside what failed in it, and a restart tries them all once more.
type holds struct {
	mu  sync.Mutex
	m   map[string]hold
	now func() time.Time // nil: time.Now (tests move their own)
}

type hold struct {
	strikes int
	until   time.Time
}

func (h *holds) clock() time.Time {
	if h.now != nil {
		return h.now()
	}
	return time.Now()
}

// failed sets key aside after a failed start and says for how long and after how many
// failures in a row (0, 0 when no room was left).
func (h *holds) failed(key string) (time.Duration, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock()
	if h.m == nil {
		h.m = map[string]hold{}
	}
	old, ok := h.m[key]
	if !ok && len(h.m) >= maxHolds {
		h.dropExpired(now)
		if len(h.m) >= maxHolds {
			return 0, 0
		}
	}
	old.strikes++
	wait := isolate.Backoff(old.strikes, isolate.First, isolate.Limit)
	old.until = now.Add(wait)
	h.m[key] = old
	metrics.StartSetAside()
	return wait, old.strikes
}

// dropExpired forgets the holds whose time has passed (mu held): they lose their
// strikes, as a start that is not tried for a while has shown nothing new.
func (h *holds) dropExpired(now time.Time) {
	for k, v := range h.m {
		if !now.Before(v.until) {
			delete(h.m, k)
		}
	}
}

// started forgets key after a start that succeeded.
func (h *holds) started(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, key)
}

// held tells whether key is set aside now.
func (h *holds) held(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[key]
	return ok && h.clock().Before(v.until)
}

// heldNow lists up to n of the keys set aside now, those set aside for longest first.
func (h *holds) heldNow(n int) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock()
	type aside struct {
		key   string
		until time.Time
	}
	var all []aside
	for k, v := range h.m {
		if now.Before(v.until) {
			all = append(all, aside{k, v.until})
		}
	}
	slices.SortFunc(all, func(a, b aside) int { return b.until.Compare(a.until) })
	out := make([]string, 0, min(n, len(all)))
	for _, a := range all[:min(n, len(all))] {
		out = append(out, a.key)
	}
	return out
}
