// Package reachability watches whether a dependency the service keeps serving without
// answers (Temporal, CONTRACT §10): a periodic probe keeps its last state, so that callers
// can ask without waiting on a network timeout, and an outage is logged once when it
// starts and once when it ends rather than by every request that meets it. (A webhook
// endpoint's health, §23, is the webhook domain's.)
package reachability

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Defaults of a Monitor.
const (
	DefaultEvery   = 5 * time.Second
	DefaultTimeout = 2 * time.Second
)

// ErrNotChecked is Err's answer before the first probe has ended.
var ErrNotChecked = errors.New("not checked yet")

// Monitor probes one dependency every Every until Run's context ends.
type Monitor struct {
	Name     string                      // in log lines, e.g. "Temporal"
	Probe    func(context.Context) error // nil error: reachable
	Every    time.Duration               // between probes; DefaultEvery when 0
	Timeout  time.Duration               // per probe; DefaultTimeout when 0
	Log      *slog.Logger
	OnChange func(up bool) // called after every probe with its outcome (a gauge)

	once  sync.Once
	first chan struct{} // closed once the first probe has ended
	mu    sync.Mutex
	err   error // last probe's error; ErrNotChecked before the first
	since time.Time
}

func (m *Monitor) init() {
	m.once.Do(func() {
		m.first = make(chan struct{})
		m.err = ErrNotChecked
	})
}

// Run probes at once, then every Every, until ctx ends.
func (m *Monitor) Run(ctx context.Context) {
	m.init()
	every := m.Every
	if every <= 0 {
		every = DefaultEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		m.probe(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (m *Monitor) probe(ctx context.Context) {
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	err := m.Probe(pctx)
	cancel()
	if ctx.Err() != nil {
		return // shutting down: a cancelled probe says nothing about the dependency
	}
	m.record(err)
}

// record keeps a probe's outcome and logs the transitions: the first failure of a
// streak at warn, the recovery at info.
func (m *Monitor) record(err error) {
	// The gauge first: whoever sees the new state through Reachable or Check (readyz)
	// then reads the same on /metrics.
	if m.OnChange != nil {
		m.OnChange(err == nil)
	}
	m.mu.Lock()
	prev, since := m.err, m.since
	m.err = err
	now := time.Now()
	wasDown := prev != nil && !errors.Is(prev, ErrNotChecked)
	isFirst := errors.Is(prev, ErrNotChecked)
	if isFirst || (err == nil) != (prev == nil) {
		m.since = now
	}
	m.mu.Unlock()
	if isFirst {
		close(m.first)
	}
	log := m.Log
	if log == nil {
		log = slog.Default()
	}
	switch {
	case err != nil && !wasDown:
		log.Warn(m.Name+" is unreachable; the service keeps serving and retries", "dependency", m.Name, "err", err)
	case err == nil && wasDown:
		log.Info(m.Name+" is reachable again", "dependency", m.Name, "unreachable_for", now.Sub(since).Round(time.Millisecond))
	}
}

// Reachable tells whether the last probe succeeded; before the first one it answers
// true, so that callers try rather than refuse while nothing is known.
func (m *Monitor) Reachable() bool {
	m.init()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err == nil || errors.Is(m.err, ErrNotChecked)
}

// Check returns the last probe's error (nil: reachable). Before the first probe has
// ended it waits for it, or for ctx (then ErrNotChecked): a readiness probe right after
// start gets an answer, not a guess.
func (m *Monitor) Check(ctx context.Context) error {
	m.init()
	select {
	case <-m.first:
	case <-ctx.Done():
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}
