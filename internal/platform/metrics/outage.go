package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// What an operator watches while Temporal is away: the API keeps serving and events wait
// in the outbox (revops_outbox_oldest_undispatched_age_seconds says for how long).
var (
	temporalReachable = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "revops_temporal_reachable",
		Help: "1 while this process's last Temporal health check succeeded, 0 while Temporal is unreachable.",
	})
	dispatchDropped = newCounter("revops_dispatch_dropped_total",
		"Events whose immediate workflow start was left to the outbox sweeper: the start queue was shutting down, could not read an overflow back from the outbox, or had none to read (a queue without outbox).")
	dispatchOverflowed = newCounter("revops_dispatch_overflow_total",
		"Events that found their environment's part of the start queue full: they stayed in the outbox and the queue read them back as soon as it had room (not the sweeper).")
)

// TemporalReachable records the outcome of the latest Temporal health check.
func TemporalReachable(up bool) {
	if up {
		temporalReachable.Set(1)
		return
	}
	temporalReachable.Set(0)
}

// DispatchDropped counts events the start queue left to the sweeper.
func DispatchDropped(n int) {
	dispatchDropped.Add(float64(n))
}

// DispatchOverflowed counts events the start queue read back from the outbox, their
// environment's part of it having been full (CONTRACT §17, "Starts under bursts").
func DispatchOverflowed(n int) {
	dispatchOverflowed.Add(float64(n))
}
