package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	panicsRecovered = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "revops_panics_recovered_total",
		Help: "Panics recovered in one tenant's unit of work (a meter consumer turn, a job's page, a workflow start), by what was running; no tenant label (CONTRACT §21).",
	}, []string{"where"})
	startsSetAside = promauto.NewCounter(prometheus.CounterOpts{
		Name: "revops_starts_set_aside_total",
		Help: "Workflow starts (deliveries, replays, jobs) that failed and were set aside for a backoff before their next try (CONTRACT §17).",
	})
)

// PanicRecovered counts one recovered panic; where is one of a fixed set of names
// (isolate.Call's callers), never a tenant's.
func PanicRecovered(where string) {
	panicsRecovered.WithLabelValues(where).Inc()
}

// StartSetAside counts one failed start set aside.
func StartSetAside() {
	startsSetAside.Inc()
}
