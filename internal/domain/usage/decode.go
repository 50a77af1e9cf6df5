package usage

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/textcheck"
)

// Members of a metric object, in the order their faults are reported.
const (
	fAccountID = iota
	fProduct
	fMetricName
	fMetricValue
	fResolution
	fMetadata
	fTimestamp
	numMetricFields
)

// rawMetric is one element of event_metrics as scanned: where its members are.
type rawMetric struct {
	object  bool
	fields  [numMetricFields]span
	unknown []unknownName
}

// decoder holds what the scan found; validation then reads only those values.
type decoder struct {
	s                         scanner
	unknown                   []unknownName
	txID, mode, metricsRaw    span
	metrics                   []rawMetric
	count                     int // elements of event_metrics, also past MaxMetrics
	metricsArray              bool
	lastMeta, lastMetaCompact []byte
	lastMetaHash              [32]byte
}

// Bodies refused before any member is read, each in an *apperr.InvalidError of code
// invalid_json: text that is not JSON, and JSON that is not an object.
var (
	ErrInvalidJSON = errors.New("body is not valid JSON")
	ErrNotObject   = errors.New("body is not a JSON object")
)

// Decode reads and validates a request body received at now. Malformed JSON is an
// invalid_json *apperr.InvalidError (ErrInvalidJSON, ErrNotObject); anything else wrong is one *apperr.ValidationError
// listing every fault with its precise param (event_metrics[3].metric_resolution).
// Numbers are kept exact: they are never read through float64.
//
// The body is scanned once (scan.go); members are then validated from their bytes.
// Duplicate keys keep the last, as encoding/json does.
func Decode(body []byte, now time.Time) (Batch, error) {
	d := decoder{s: scanner{data: body}}
	if c := d.s.peek(); c != '{' {
		if c == 0 || !json.Valid(body) {
			return Batch{}, apperr.Invalid(ErrInvalidJSON, apperr.CodeInvalidJSON, "", "The body is not valid JSON.")
		}
		return Batch{}, apperr.Invalid(ErrNotObject, apperr.CodeInvalidJSON, "", "The body must be a JSON object.")
	}
	if !d.s.object(d.topMember) || !d.s.atEnd() {
		return Batch{}, apperr.Invalid(ErrInvalidJSON, apperr.CodeInvalidJSON, "", "The body is not valid JSON.")
	}
	var b Batch
	var fs apperr.Faults
	reportUnknown(d.unknown, -1, &fs)
	b.TransactionID = identifier(d.raw(d.txID), param{-1, "transaction_id"}, &fs)
	if raw := d.raw(d.mode); required(raw, param{-1, "mode"}, &fs) {
		mode, ok := text(raw, param{-1, "mode"}, &fs)
		if ok && mode != ModeIncrement && mode != ModeSet {
			fs.Invalid("mode", "mode must be \"increment\" or \"set\".")
		}
		b.Mode = mode
	}
	if required(d.raw(d.metricsRaw), param{-1, "event_metrics"}, &fs) {
		b.Metrics = d.validateMetrics(b.Mode, now.UTC(), &fs)
	}
	if err := fs.Err(); err != nil {
		return Batch{}, err
	}
	return b, nil
}

func (d *decoder) raw(sp span) []byte {
	if sp.end == 0 {
		return nil
	}
	return d.s.data[sp.start:sp.end]
}

// topMember records a member of the body object; event_metrics is scanned in place.
func (d *decoder) topMember(key []byte, escaped bool) bool {
	var ok bool
	switch name := keyName(key, escaped); name {
	case "transaction_id":
		d.txID, ok = d.s.value()
	case "mode":
		d.mode, ok = d.s.value()
	case "event_metrics":
		d.metrics, d.count = d.metrics[:0], 0
		d.metricsArray = d.s.peek() == '['
		start := d.s.pos
		if d.metricsArray {
			ok = d.s.array(d.element)
		} else {
			_, ok = d.s.value()
		}
		d.metricsRaw = span{start, d.s.pos}
	default:
		d.unknown = append(d.unknown, unknownName{name, textcheck.JSONString(key, escaped)})
		_, ok = d.s.value()
	}
	return ok
}

// element records one element of event_metrics; past MaxMetrics they are only counted.
func (d *decoder) element(int) bool {
	d.count++
	if d.s.peek() != '{' || d.count > MaxMetrics {
		if d.count <= MaxMetrics {
			d.metrics = append(d.metrics, rawMetric{})
		}
		_, ok := d.s.value()
		return ok
	}
	if d.metrics == nil {
		d.metrics = make([]rawMetric, 0, min(MaxMetrics, len(d.s.data)/32+1))
	}
	d.metrics = append(d.metrics, rawMetric{object: true})
	m := &d.metrics[len(d.metrics)-1]
	return d.s.object(func(key []byte, escaped bool) bool {
		sp, ok := d.s.value()
		name, raw := "", key
		if escaped || !utf8.Valid(key) {
			name = keyName(key, escaped)
			key = []byte(name)
		}
		if i := fieldIndex(key); i >= 0 {
			m.fields[i] = sp
		} else {
			if name == "" {
				name = string(key)
			}
			m.unknown = append(m.unknown, unknownName{name, textcheck.JSONString(raw, escaped)})
		}
		return ok
	})
}

// fieldIndex is the index (f*) of a metric member, -1 for an unknown one.
func fieldIndex(key []byte) int {
	switch string(key) {
	case "account_id":
		return fAccountID
	case "product":
		return fProduct
	case "metric_name":
		return fMetricName
	case "metric_value":
		return fMetricValue
	case "metric_resolution":
		return fResolution
	case "metadata":
		return fMetadata
	case "timestamp":
		return fTimestamp
	}
	return -1
}

// keyName is a member name as encoding/json decodes it (escapes resolved, bad UTF-8 as
// U+FFFD).
func keyName(key []byte, escaped bool) string {
	var s string
	if (escaped || !utf8.Valid(key)) && json.Unmarshal(quoted(key), &s) == nil {
		return s
	}
	return string(key)
}

func quoted(content []byte) []byte {
	q := make([]byte, 0, len(content)+2)
	return append(append(append(q, '"'), content...), '"')
}

// validateMetrics applies the rules to the scanned event_metrics.
func (d *decoder) validateMetrics(mode string, now time.Time, fs *apperr.Faults) []Metric {
	switch {
	case !d.metricsArray:
		fs.Invalid("event_metrics", "event_metrics must be an array of metric objects.")
		return nil
	case d.count == 0:
		fs.Invalid("event_metrics", "event_metrics must hold at least 1 metric.")
		return nil
	case d.count > MaxMetrics:
		fs.Invalid("event_metrics", "event_metrics holds %d metrics; send at most %d per request.", d.count, MaxMetrics)
		return nil
	}
	out := make([]Metric, len(d.metrics))
	for i := range d.metrics {
		if !d.metrics[i].object {
			fs.Invalid(metricAt(i), "%s must be a metric object.", metricAt(i))
			continue
		}
		d.metric(&out[i], &d.metrics[i], i, mode, now, fs)
	}
	return out
}

func (d *decoder) metric(m *Metric, r *rawMetric, i int, mode string, now time.Time, fs *apperr.Faults) {
	reportUnknown(r.unknown, i, fs)
	f := func(k int) []byte { return d.raw(r.fields[k]) }
	m.AccountID = identifier(f(fAccountID), param{i, "account_id"}, fs)
	m.Product = identifier(f(fProduct), param{i, "product"}, fs)
	m.MetricName = identifier(f(fMetricName), param{i, "metric_name"}, fs)
	if v := f(fMetricValue); required(v, param{i, "metric_value"}, fs) {
		m.Value = value(v, param{i, "metric_value"}, mode, fs)
	}
	if v := f(fResolution); required(v, param{i, "metric_resolution"}, fs) {
		res, ok := text(v, param{i, "metric_resolution"}, fs)
		if ok {
			if r, valid := resolution(res); valid {
				res = r
			} else {
				fs.Invalid(param{i, "metric_resolution"}.String(), "%s.metric_resolution must be one of minute, hour, day, week, month.", metricAt(i))
			}
		}
		m.Resolution = res
	}
	m.Metadata, m.metaHash = d.metadata(f(fMetadata), param{i, "metadata"}, fs)
	m.Timestamp, m.TimestampSet = timestamp(f(fTimestamp), param{i, "timestamp"}, now, fs)
	if !m.TimestampSet {
		m.Timestamp = now
	}
}

// resolution returns the package constant equal to r (no copy of the text per metric).
func resolution(r string) (string, bool) {
	for _, c := range [...]string{Minute, Hour, Day, Week, Month} {
		if r == c {
			return c, true
		}
	}
	return r, false
}

// param names a field in faults; its text is built only when a fault is recorded.
type param struct {
	index int // metric index, -1 for a member of the body
	field string
}

func (p param) String() string {
	if p.index < 0 {
		return p.field
	}
	return metricAt(p.index) + "." + p.field
}

// metricAt names the metric itself: event_metrics[3].
func metricAt(i int) string { return "event_metrics[" + strconv.Itoa(i) + "]" }

// unknownName is a member that is not known, by its decoded name; err is set when its
// name as sent is not a string PostgreSQL could store (CONTRACT §15).
type unknownName struct {
	name string
	err  error
}

// reportUnknown reports members that are not known, each once, in name order so errors
// are stable. A name that breaks CONTRACT §15 (in any of its spellings) is invalid_string.
func reportUnknown(names []unknownName, index int, fs *apperr.Faults) {
	if len(names) == 0 {
		return
	}
	slices.SortStableFunc(names, func(a, b unknownName) int { return strings.Compare(a.name, b.name) })
	for i := 0; i < len(names); {
		k, err := names[i].name, names[i].err
		for i++; i < len(names) && names[i].name == k; i++ {
			if err == nil {
				err = names[i].err
			}
		}
		p := param{index, k}.String()
		if err != nil {
			fs.Add(p, textcheck.Code, "The name of %s %v.", p, err)
			continue
		}
		fs.Add(p, apperr.CodeUnknownParameter, "Unknown parameter %s.", p)
	}
}
