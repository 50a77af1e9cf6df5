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
	dispatchDropped = promauto.NewCounter(prometheus.CounterOpts{
		Name: "revops_dispatch_dropped_total",
		Help: "Events whose immediate workflow start was skipped because the start queue was full or shutting down; the outbox sweeper starts them.",
	})
)

// TemporalReachable records the outcome of the latest Temporal health check.
func TemporalReachable(up bool) {
	if up {
		temporalReachable.Set(1)
		return
	}
	temporalReachable.Set(0)
}

// DispatchDropped counts events left to the sweeper by the start queue.
func DispatchDropped(n int) {
	dispatchDropped.Add(float64(n))
}
