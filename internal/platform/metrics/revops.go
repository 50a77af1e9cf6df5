package metrics

import (
	"context"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// The metrics of Revops itself, on the default registry that Serve exposes. Labels are
// bounded sets only (route templates, not paths; event types; outcomes).
var (
	httpRequests = newCounterVec("revops_http_requests_total",
		"HTTP requests answered, by method, route template (\"unmatched\" for unknown routes) and status code.",
		"method", "route", "status")
	httpDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "revops_http_request_duration_seconds",
		Help:    "Time to answer HTTP requests, by method, route template and status code.",
		Buckets: prometheus.DefBuckets,
	}, []string{"method", "route", "status"})

	usageAccepted = newCounterVec("revops_usage_metrics_accepted_total",
		"Usage metrics accepted by POST /v1/usage/events (idempotent replays not counted), by environment.",
		"environment")

	eventsEmitted = newCounterVec("revops_events_emitted_total",
		"Webhook events committed by API changes, by event type.",
		"type")

	deliveryAttempts = newCounterVec("revops_webhook_delivery_attempts_total",
		"Webhook delivery attempts, by outcome.",
		"outcome")
	deliveryDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name: "revops_webhook_delivery_attempt_duration_seconds",
		Help: "Duration of webhook delivery attempts (bounded by the 30 s deadline), by outcome.",
		// Receivers answer in milliseconds when healthy; the tail up to 30 s is what hurts.
		Buckets: []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 35},
	}, []string{"outcome"})
	eventsFinal = newCounterVec("revops_webhook_events_final_total",
		"Webhook events that reached a final status (delivered, failed, skipped), by type and status.",
		"type", "status")
	operationalEvents = newCounterVec("revops_webhook_operational_events_total",
		"Operational events of endpoint health committed (endpoint-failing, endpoint-recovered, delivery-exhausted; CONTRACT §23), by type.",
		"type")
	endpointsDisabled = newCounter("revops_webhook_endpoints_disabled",
		"Webhook endpoints disabled automatically because their attempts kept failing (CONTRACT §13).")
)

// HTTPRequest records one answered request; route is the route template or "unmatched".
func HTTPRequest(method, route string, status int, d time.Duration) {
	code := strconv.Itoa(status)
	httpRequests.WithLabelValues(method, route, code).Inc()
	httpDuration.WithLabelValues(method, route, code).Observe(d.Seconds())
}

// UsageAccepted counts the metrics of one newly accepted usage batch.
func UsageAccepted(environment string, n int) {
	usageAccepted.WithLabelValues(environment).Add(float64(n))
}

// EventEmitted counts one committed webhook event.
func EventEmitted(eventType string) {
	eventsEmitted.WithLabelValues(eventType).Inc()
}

// DeliveryAttempt records one webhook delivery attempt and how long it took.
func DeliveryAttempt(outcome string, d time.Duration) {
	deliveryAttempts.WithLabelValues(outcome).Inc()
	deliveryDuration.WithLabelValues(outcome).Observe(d.Seconds())
}

// EventFinal counts an event reaching its final status.
func EventFinal(eventType, status string) {
	eventsFinal.WithLabelValues(eventType, status).Inc()
}

// OperationalEvent counts one committed operational event of endpoint health.
func OperationalEvent(eventType string) {
	operationalEvents.WithLabelValues(eventType).Inc()
}

// EndpointDisabled counts one endpoint disabled automatically.
func EndpointDisabled() {
	endpointsDisabled.Inc()
}

// outboxTimeout bounds the query a scrape triggers, so a slow database cannot hang scrapes.
const outboxTimeout = 2 * time.Second

var (
	outboxAge  atomic.Pointer[func(context.Context) (time.Duration, error)]
	outboxOnce sync.Once
)

// RegisterOutbox exposes revops_outbox_oldest_undispatched_age_seconds, read at each
// scrape through age (the store's OutboxBacklogAge). Calling it again replaces the
// function, so a process wiring both API and worker may call it twice. A failed read
// shows NaN: "unknown" is more honest than a stale or zero age.
func RegisterOutbox(age func(ctx context.Context) (time.Duration, error)) {
	outboxAge.Store(&age)
	outboxOnce.Do(func() {
		promauto.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "revops_outbox_oldest_undispatched_age_seconds",
			Help: "Age of the oldest event whose delivery workflow has not been started (0: none waiting).",
		}, readOutboxAge)
	})
}

func readOutboxAge() float64 {
	f := outboxAge.Load()
	if f == nil {
		return math.NaN()
	}
	ctx, cancel := context.WithTimeout(context.Background(), outboxTimeout)
	defer cancel()
	d, err := (*f)(ctx)
	if err != nil {
		return math.NaN()
	}
	return d.Seconds()
}
