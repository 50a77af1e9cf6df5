package metrics

var (
	panicsRecovered = newCounterVec("revops_panics_recovered_total",
		"Panics recovered in one tenant's unit of work (a meter consumer turn, a job's page, a workflow start), by what was running; no tenant label (CONTRACT §21).",
		"where")
	startsSetAside = newCounter("revops_starts_set_aside_total",
		"Workflow starts (deliveries, replays, jobs) that failed and were set aside for a backoff before their next try (CONTRACT §17).")
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
