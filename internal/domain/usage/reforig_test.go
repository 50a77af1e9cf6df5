// The decoder as it was before the single-pass rewrite (decode.go, canonical.go, the
// parsing half of decimal.go and Batch.Hash), kept for tests only: the reference tests
// (reference_test.go) prove the rewrite changed no outcome.
package usage

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"slices"
	"sort"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/textcheck"
)

var (
	refBatchFields  = []string{"transaction_id", "mode", "event_metrics"}
	refMetricFields = []string{"account_id", "product", "metric_name", "metric_value", "metric_resolution", "metadata", "timestamp"}
)

// refDecode reads and validates a request body received at now. Malformed JSON is an
// invalid_json *apperr.InvalidError (ErrInvalidJSON, ErrNotObject: the values Decode now
// returns, so that the two errors compare equal); anything else wrong is one *apperr.ValidationError
// listing every fault with its precise param (event_metrics[3].metric_resolution).
// Numbers are kept exact: they are never read through float64.
func refDecode(body []byte, now time.Time) (Batch, error) {
	var b Batch
	trimmed := bytes.TrimSpace(body)
	top, ok := refObject(trimmed) // validates the whole body: one pass instead of json.Valid + decode
	if !ok {
		if len(trimmed) == 0 || !json.Valid(trimmed) {
			return b, apperr.Invalid(ErrInvalidJSON, apperr.CodeInvalidJSON, "", "The body is not valid JSON.")
		}
		return b, apperr.Invalid(ErrNotObject, apperr.CodeInvalidJSON, "", "The body must be a JSON object.")
	}
	var fs apperr.Faults
	refUnknown(top, refBatchFields, "", refKeyFaults(trimmed), &fs)
	b.TransactionID, _ = refIdentifier(top, "transaction_id", "transaction_id", &fs)
	if raw, ok := refRequired(top, "mode", "mode", &fs); ok {
		mode, ok := refText(raw, "mode", &fs)
		if ok && mode != ModeIncrement && mode != ModeSet {
			fs.Invalid("mode", "mode must be \"increment\" or \"set\".")
		}
		b.Mode = mode
	}
	if raw, ok := refRequired(top, "event_metrics", "event_metrics", &fs); ok {
		b.Metrics = refMetrics(raw, b.Mode, now.UTC(), &fs)
	}
	if err := fs.Err(); err != nil {
		return Batch{}, err
	}
	return b, nil
}

func refMetrics(raw json.RawMessage, mode string, now time.Time, fs *apperr.Faults) []Metric {
	if raw[0] != '[' {
		fs.Invalid("event_metrics", "event_metrics must be an array of metric objects.")
		return nil
	}
	// Fast path: one decoding pass when every element is an object (the usual case).
	var objs []map[string]json.RawMessage
	if json.Unmarshal(raw, &objs) == nil && !slices.ContainsFunc(objs, refIsNilMap) && len(objs) > 0 && len(objs) <= MaxMetrics {
		var items []json.RawMessage
		_ = json.Unmarshal(raw, &items) // valid: objs decoded
		out := make([]Metric, len(objs))
		for i, fields := range objs {
			out[i] = refMetric(fields, items[i], fmt.Sprintf("event_metrics[%d]", i), mode, now, fs)
		}
		return out
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		fs.Invalid("event_metrics", "event_metrics must be an array of metric objects.")
		return nil
	}
	switch {
	case len(items) == 0:
		fs.Invalid("event_metrics", "event_metrics must hold at least 1 metric.")
		return nil
	case len(items) > MaxMetrics:
		fs.Invalid("event_metrics", "event_metrics holds %d metrics; send at most %d per request.", len(items), MaxMetrics)
		return nil
	}
	out := make([]Metric, len(items))
	for i, item := range items {
		at := fmt.Sprintf("event_metrics[%d]", i)
		fields, ok := refObject(item)
		if !ok {
			fs.Invalid(at, "%s must be a metric object.", at)
			continue
		}
		out[i] = refMetric(fields, item, at, mode, now, fs)
	}
	return out
}

func refMetric(fields map[string]json.RawMessage, raw json.RawMessage, at, mode string, now time.Time, fs *apperr.Faults) Metric {
	var m Metric
	refUnknown(fields, refMetricFields, at+".", refKeyFaults(raw), fs)
	m.AccountID, _ = refIdentifier(fields, "account_id", at+".account_id", fs)
	m.Product, _ = refIdentifier(fields, "product", at+".product", fs)
	m.MetricName, _ = refIdentifier(fields, "metric_name", at+".metric_name", fs)
	if v, ok := refRequired(fields, "metric_value", at+".metric_value", fs); ok {
		m.Value = refValue(v, at+".metric_value", mode, fs)
	}
	if v, ok := refRequired(fields, "metric_resolution", at+".metric_resolution", fs); ok {
		res, ok := refText(v, at+".metric_resolution", fs)
		if ok && !ValidResolution(res) {
			fs.Invalid(at+".metric_resolution", "%s.metric_resolution must be one of minute, hour, day, week, month.", at)
		}
		m.Resolution = res
	}
	m.Metadata, m.metaHash = refMetadata(fields["metadata"], at+".metadata", fs)
	m.Timestamp, m.TimestampSet = refTimestamp(fields["timestamp"], at+".timestamp", now, fs)
	if !m.TimestampSet {
		m.Timestamp = now
	}
	return m
}

func refIsNilMap(m map[string]json.RawMessage) bool { return m == nil }

// refObject decodes a JSON object's members; duplicate keys keep the last, as everywhere in Go.
func refObject(raw []byte) (map[string]json.RawMessage, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// refUnknown reports members that are not in known, in name order so errors are stable;
// a name in bad (sent in a spelling that breaks CONTRACT §15) is invalid_string.
func refUnknown(m map[string]json.RawMessage, known []string, prefix string, bad map[string]error, fs *apperr.Faults) {
	var extra []string
	for k := range m {
		found := false
		for _, kn := range known {
			if k == kn {
				found = true
				break
			}
		}
		if !found {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		if err := bad[k]; err != nil {
			fs.Add(prefix+k, textcheck.Code, "The name of %s%s %v.", prefix, k, err)
			continue
		}
		fs.Add(prefix+k, apperr.CodeUnknownParameter, "Unknown parameter %s%s.", prefix, k)
	}
}

// refRequired returns a member that must be present and not null.
func refRequired(m map[string]json.RawMessage, name, param string, fs *apperr.Faults) (json.RawMessage, bool) {
	raw, ok := m[name]
	if !ok || refIsNull(raw) {
		fs.Missing(param)
		return nil, false
	}
	return raw, true
}

func refIsNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// refText decodes a JSON string member.
func refText(raw json.RawMessage, param string, fs *apperr.Faults) (string, bool) {
	if raw[0] != '"' {
		fs.Invalid(param, "%s must be a string.", param)
		return "", false
	}
	if err := refStringFault(raw); err != nil {
		fs.Add(param, textcheck.Code, "%s %v.", param, err)
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 { // fast path: nothing to unescape
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		fs.Invalid(param, "%s must be a string.", param)
		return "", false
	}
	return s, true
}

// refIdentifier decodes a required id: 1–255 printable characters.
func refIdentifier(m map[string]json.RawMessage, name, param string, fs *apperr.Faults) (string, bool) {
	raw, ok := refRequired(m, name, param, fs)
	if !ok {
		return "", false
	}
	s, ok := refText(raw, param, fs)
	if !ok {
		return "", false
	}
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r <= 0x9f {
			fs.Add(param, textcheck.Code, "%s %v.", param, textcheck.ErrControl)
			return "", false
		}
	}
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxIDLength {
		fs.Invalid(param, "%s must be 1 to %d characters long (it has %d).", param, MaxIDLength, n)
		return "", false
	}
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			fs.Invalid(param, "%s must hold printable characters only.", param)
			return "", false
		}
	}
	return s, true
}

// refValue decodes metric_value: a finite JSON number, negative only in increment mode.
func refValue(raw json.RawMessage, param, mode string, fs *apperr.Faults) decimal.Decimal {
	if raw[0] == '"' {
		fs.Invalid(param, "%s must be a JSON number, not a string.", param)
		return decimal.Decimal{}
	}
	d, err := decimal.Parse(string(raw))
	switch err {
	case nil:
	case decimal.ErrNotNumber:
		fs.Invalid(param, "%s must be a JSON number.", param)
	case decimal.ErrPrecision:
		fs.Invalid(param, "%s must have at most %d significant digits.", param, decimal.MaxSignificantDigits)
	default:
		fs.Invalid(param, "%s must be a finite number (|value| ≤ 1.7976931348623157e308, and not so small that it reads as 0).", param)
	}
	if err == nil && mode == ModeSet && d.Sign() < 0 {
		fs.Invalid(param, "%s may be negative only in increment mode.", param)
	}
	if n := len(d.String()); err == nil && n > 64 {
		fs.Add(param, "invalid_number", "%s must be at most 64 characters written out in plain decimal (it has %d).", param, n)
	}
	return d
}

var refEmptyMetaHash = refCanonicalHash([]byte("{}"))

// refMetadata checks the optional metadata object and returns it compact, with its
// canonical hash; absent or null means {}.
func refMetadata(raw json.RawMessage, param string, fs *apperr.Faults) ([]byte, [32]byte) {
	if refIsNull(raw) || string(raw) == "{}" {
		return []byte("{}"), refEmptyMetaHash
	}
	if raw[0] != '{' {
		fs.Invalid(param, "%s must be a JSON object.", param)
		return nil, [32]byte{}
	}
	faultParam, code, msg, grow := refMetaCheck(raw, param)
	if faultParam != "" {
		fs.Add(faultParam, code, "%s", msg)
		return nil, [32]byte{}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		fs.Invalid(param, "%s must be a JSON object.", param)
		return nil, [32]byte{}
	}
	if buf.Len()+grow > MaxMetadataBytes {
		fs.Invalid(param, "%s is %d bytes encoded; the limit is %d.", param, buf.Len()+grow, MaxMetadataBytes)
		return nil, [32]byte{}
	}
	return buf.Bytes(), refCanonicalHash(buf.Bytes())
}

// refTimestamp reads the optional timestamp: RFC 3339 or integer Unix seconds, from 35 days
// before now to 5 minutes after it.
func refTimestamp(raw json.RawMessage, param string, now time.Time, fs *apperr.Faults) (time.Time, bool) {
	if refIsNull(raw) {
		return time.Time{}, false
	}
	var t time.Time
	if raw[0] == '"' {
		s, ok := refText(raw, param, fs)
		if !ok {
			return time.Time{}, false
		}
		p, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			fs.Invalid(param, "%s must be an RFC 3339 time (2006-01-02T15:04:05Z) or integer Unix seconds.", param)
			return time.Time{}, false
		}
		t = p.UTC()
	} else {
		sec, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || sec < -62135596800 || sec > 253402300799 {
			fs.Invalid(param, "%s must be an RFC 3339 time (2006-01-02T15:04:05Z) or integer Unix seconds.", param)
			return time.Time{}, false
		}
		t = time.Unix(sec, 0).UTC()
	}
	if t.Before(now.Add(-MaxPast)) || t.After(now.Add(MaxFuture)) {
		fs.Invalid(param, "%s must be within the last 35 days and at most 5 minutes ahead (got %s).", param, t.Format(time.RFC3339))
		return time.Time{}, false
	}
	return t, true
}

// refCanonicalHash hashes a valid JSON value by value: object keys sorted, whitespace gone,
// numbers in one form (1, 1.0 and 1e0 alike), strings with one escaping.
func refCanonicalHash(raw []byte) [32]byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return sha256.Sum256(raw) // not reached for validated input; still deterministic
	}
	var buf bytes.Buffer
	writeCanonical(&buf, v)
	return sha256.Sum256(buf.Bytes())
}

// refHash is the canonical hash of a batch: equal for requests equal by value (1, 1.0 and 1e0
// alike; metadata by value, {} when absent; key order and whitespace ignored). A
// refTimestamp the caller left out is not part of it, so a retry later is still a replay.
func refHash(b *Batch) string {
	h := sha256.New()
	refWriteField(h, []byte(b.TransactionID))
	refWriteField(h, []byte(b.Mode))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b.Metrics)))
	h.Write(n[:])
	for i := range b.Metrics {
		m := &b.Metrics[i]
		refWriteField(h, []byte(m.AccountID))
		refWriteField(h, []byte(m.Product))
		refWriteField(h, []byte(m.MetricName))
		refWriteField(h, []byte(m.Value.String()))
		refWriteField(h, []byte(m.Resolution))
		refWriteField(h, m.metaHash[:])
		ts := "-"
		if m.TimestampSet {
			ts = m.Timestamp.UTC().Format(time.RFC3339Nano)
		}
		refWriteField(h, []byte(ts))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func refWriteField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}
