package metrics

import (
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
)

// TemporalHandler bridges the Temporal SDK's client and worker metrics to Prometheus
// (client.Options.MetricsHandler). An SDK metric "temporal_request" becomes
// revops_temporal_request_total (counter), a gauge keeps its name, a timer becomes a
// histogram revops_<name>_seconds; tags become labels. This small adapter stands in for
// contrib/tally, which would pull in a second metrics library.
func TemporalHandler() client.MetricsHandler {
	return temporalHandler{m: defaultTemporal}
}

var defaultTemporal = newTemporalMetrics(prometheus.DefaultRegisterer)

type metricKind int

const (
	kindCounter metricKind = iota
	kindGauge
	kindTimer
)

// temporalBuckets span the SDK's timers: gRPC calls in milliseconds up to long polls
// and schedule-to-start latencies of minutes.
var temporalBuckets = prometheus.ExponentialBuckets(0.001, 4, 10) // 1 ms … 262 s

// family is one Prometheus metric; its label names are fixed when the SDK first uses it.
// The SDK may later use the same name with other tags: missing labels are then empty
// and extra tags dropped, because a family with varying label names would fail every
// scrape.
type family struct {
	kind    metricKind
	labels  []string
	counter *prometheus.CounterVec
	gauge   *prometheus.GaugeVec
	timer   *prometheus.HistogramVec
}

func (f *family) values(tags map[string]string) []string {
	out := make([]string, len(f.labels))
	for i, l := range f.labels {
		out[i] = tags[l]
	}
	return out
}

// temporalMetrics holds the families created so far, by Prometheus name.
type temporalMetrics struct {
	reg      prometheus.Registerer
	mu       sync.Mutex
	families map[string]*family
}

func newTemporalMetrics(reg prometheus.Registerer) *temporalMetrics {
	return &temporalMetrics{reg: reg, families: map[string]*family{}}
}

// family returns the family of an SDK metric, creating and registering it on first use;
// nil when the name cannot be used (taken by a metric of another kind or another owner).
func (m *temporalMetrics) family(kind metricKind, sdkName string, tags map[string]string) *family {
	name := promName(kind, sdkName)
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, ok := m.families[name]; ok {
		if f.kind != kind {
			return nil
		}
		return f
	}
	f := &family{kind: kind, labels: sortedKeys(tags)}
	help := "Temporal SDK metric " + sdkName + "."
	var c prometheus.Collector
	switch kind {
	case kindCounter:
		f.counter = prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, f.labels)
		c = f.counter
	case kindGauge:
		f.gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, f.labels)
		c = f.gauge
	default:
		f.timer = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: temporalBuckets}, f.labels)
		c = f.timer
	}
	if err := m.reg.Register(c); err != nil && !adopt(f, err) {
		return nil
	}
	m.families[name] = f
	return f
}

// adopt reuses a collector already registered under the same description (a second
// adapter on one registry).
func adopt(f *family, err error) bool {
	var are prometheus.AlreadyRegisteredError
	if !errors.As(err, &are) {
		return false
	}
	var ok bool
	switch f.kind {
	case kindCounter:
		f.counter, ok = are.ExistingCollector.(*prometheus.CounterVec)
	case kindGauge:
		f.gauge, ok = are.ExistingCollector.(*prometheus.GaugeVec)
	default:
		f.timer, ok = are.ExistingCollector.(*prometheus.HistogramVec)
	}
	return ok
}

func promName(kind metricKind, sdkName string) string {
	name := "revops_" + sanitize(sdkName)
	switch kind {
	case kindCounter:
		return name + "_total"
	case kindTimer:
		return name + "_seconds"
	}
	return name
}

func sortedKeys(tags map[string]string) []string {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sanitize makes a Prometheus metric or label name: [a-zA-Z_][a-zA-Z0-9_]*, and no
// leading "__" (reserved).
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0) {
			b[i] = '_'
		}
	}
	out := strings.TrimLeft(string(b), "_")
	if out == "" {
		return "x"
	}
	return out
}

// temporalHandler is client.MetricsHandler with the tags accumulated by WithTags.
type temporalHandler struct {
	m    *temporalMetrics
	tags map[string]string
}

var _ client.MetricsHandler = temporalHandler{}

func (h temporalHandler) WithTags(tags map[string]string) client.MetricsHandler {
	merged := make(map[string]string, len(h.tags)+len(tags))
	for k, v := range h.tags {
		merged[sanitize(k)] = v
	}
	for k, v := range tags {
		merged[sanitize(k)] = v
	}
	return temporalHandler{m: h.m, tags: merged}
}

func (h temporalHandler) Counter(name string) client.MetricsCounter {
	f := h.m.family(kindCounter, name, h.tags)
	if f == nil {
		return nop{}
	}
	c, err := f.counter.GetMetricWithLabelValues(f.values(h.tags)...)
	if err != nil {
		return nop{}
	}
	return counter{c}
}

func (h temporalHandler) Gauge(name string) client.MetricsGauge {
	f := h.m.family(kindGauge, name, h.tags)
	if f == nil {
		return nop{}
	}
	g, err := f.gauge.GetMetricWithLabelValues(f.values(h.tags)...)
	if err != nil {
		return nop{}
	}
	return gauge{g}
}

func (h temporalHandler) Timer(name string) client.MetricsTimer {
	f := h.m.family(kindTimer, name, h.tags)
	if f == nil {
		return nop{}
	}
	o, err := f.timer.GetMetricWithLabelValues(f.values(h.tags)...)
	if err != nil {
		return nop{}
	}
	return timer{o}
}

type counter struct{ c prometheus.Counter }

// Inc ignores negative steps, which a Prometheus counter refuses with a panic.
func (c counter) Inc(d int64) {
	if d > 0 {
		c.c.Add(float64(d))
	}
}

type gauge struct{ g prometheus.Gauge }

func (g gauge) Update(v float64) { g.g.Set(v) }

type timer struct{ o prometheus.Observer }

func (t timer) Record(d time.Duration) { t.o.Observe(d.Seconds()) }

type nop struct{}

func (nop) Inc(int64)            {}
func (nop) Update(float64)       {}
func (nop) Record(time.Duration) {}
