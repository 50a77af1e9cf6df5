package usage

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/jsonnum"
	"github.com/revops/revops/internal/platform/textcheck"
)

// The rules of one member, applied to its bytes as scanned (nil when absent).

// required tells whether a member that must be present is there and not null.
func required(raw []byte, p param, fs *apperr.Faults) bool {
	if isNull(raw) {
		fs.Missing(p.String())
		return false
	}
	return true
}

func isNull(raw []byte) bool { return len(raw) == 0 || string(raw) == "null" }

// text decodes a JSON string member; it must be valid UTF-8 without NUL (CONTRACT §15).
func text(raw []byte, p param, fs *apperr.Faults) (string, bool) {
	if raw[0] != '"' {
		fs.Invalid(p.String(), "%s must be a string.", p)
		return "", false
	}
	content := raw[1 : len(raw)-1]
	escaped := bytes.IndexByte(content, '\\') >= 0
	if err := textcheck.JSONString(content, escaped); err != nil {
		textcheck.AddFault(fs, p.String(), err)
		return "", false
	}
	if !escaped { // fast path: nothing to unescape
		return string(content), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		fs.Invalid(p.String(), "%s must be a string.", p)
		return "", false
	}
	return s, true
}

// identifier decodes a required id: 1–255 printable characters.
func identifier(raw []byte, p param, fs *apperr.Faults) string {
	if !required(raw, p, fs) {
		return ""
	}
	s, ok := text(raw, p, fs)
	if !ok {
		return ""
	}
	if printableASCII(s) && len(s) >= 1 && len(s) <= MaxIDLength { // the usual case, in one loop
		return s
	}
	if !IdentifierOK(fs, p.String(), s) {
		return ""
	}
	return s
}

// IdentifierOK applies the rule of account_id, product and metric_name (1–255 printable
// characters, CONTRACT §5 and §15) to s, the decoded value of param, and records a fault
// unless it holds. Meters (CONTRACT §18) hold the names they refer to, metric names and
// metadata keys, to the same rule, so that a definition names only what usage can carry.
func IdentifierOK(fs *apperr.Faults, param, s string) bool {
	if err := textcheck.Line(s); err != nil {
		textcheck.AddFault(fs, param, err)
		return false
	}
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxIDLength {
		fs.Invalid(param, "%s must be 1 to %d characters long (it has %d).", param, MaxIDLength, n)
		return false
	}
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			fs.Invalid(param, "%s must hold printable characters only.", param)
			return false
		}
	}
	return true
}

// printableASCII: every byte is ASCII and unicode.IsPrint (space to tilde).
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// value decodes metric_value: a finite JSON number, negative only in increment mode.
func value(raw []byte, p param, mode string, fs *apperr.Faults) decimal.Decimal {
	if raw[0] == '"' {
		fs.Invalid(p.String(), "%s must be a JSON number, not a string.", p)
		return decimal.Decimal{}
	}
	d, err := decimal.ParseBytes(raw)
	switch err {
	case nil:
	case decimal.ErrNotNumber:
		fs.Invalid(p.String(), "%s must be a JSON number.", p)
	case decimal.ErrPrecision:
		fs.Invalid(p.String(), "%s must have at most %d significant digits.", p, decimal.MaxSignificantDigits)
	default:
		fs.Invalid(p.String(), "%s must be a finite number (|value| ≤ 1.7976931348623157e308, and not so small that it reads as 0).", p)
	}
	if err == nil && mode == ModeSet && d.Sign() < 0 {
		fs.Invalid(p.String(), "%s may be negative only in increment mode.", p)
	}
	if n := d.TextLen(); err == nil && n > jsonnum.MaxText {
		fs.Add(p.String(), jsonnum.Code, "%s must be at most %d characters written out in plain decimal (it has %d).", p, jsonnum.MaxText, n)
	}
	return d
}

// emptyMeta is the metadata of a metric without any; shared, never written to.
var (
	emptyMeta     = []byte("{}")[:2:2]
	emptyMetaHash = canonicalHash([]byte("{}"))
)

// metadata checks the optional metadata object and returns it compact, with its
// canonical hash; absent or null means {}. Its strings and numbers must meet CONTRACT §15
// (the first that does not is reported, by its path), and its size counts numbers as
// PostgreSQL prints them. Metrics of a batch often carry the same metadata: a repeat of
// the previous metric's bytes shares its result.
func (d *decoder) metadata(raw []byte, p param, fs *apperr.Faults) ([]byte, [32]byte) {
	if isNull(raw) || string(raw) == "{}" {
		return emptyMeta, emptyMetaHash
	}
	if raw[0] != '{' {
		fs.Invalid(p.String(), "%s must be a JSON object.", p)
		return nil, [32]byte{}
	}
	if d.lastMeta != nil && bytes.Equal(raw, d.lastMeta) {
		return d.lastMetaCompact, d.lastMetaHash
	}
	grow, fault := checkMetadata(raw)
	if fault != nil {
		name := fault.param(p)
		fs.Add(name, fault.code(), "%s", fault.message(name))
		return nil, [32]byte{}
	}
	c := compact(make([]byte, 0, len(raw)), raw)
	if size := len(c) + grow; size > MaxMetadataBytes { // as stored: numbers written out
		fs.Invalid(p.String(), "%s is %d bytes encoded; the limit is %d.", p, size, MaxMetadataBytes)
		return nil, [32]byte{}
	}
	c = c[:len(c):len(c)] // shared by the metrics that repeat it: appends must copy
	d.lastMeta, d.lastMetaCompact, d.lastMetaHash = raw, c, canonicalHash(c)
	return c, d.lastMetaHash
}

// timestamp reads the optional timestamp: RFC 3339 or integer Unix seconds, from 35 days
// before now to 5 minutes after it.
func timestamp(raw []byte, p param, now time.Time, fs *apperr.Faults) (time.Time, bool) {
	if isNull(raw) {
		return time.Time{}, false
	}
	var t time.Time
	if raw[0] == '"' {
		s, ok := text(raw, p, fs)
		if !ok {
			return time.Time{}, false
		}
		parsed, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			fs.Invalid(p.String(), "%s must be an RFC 3339 time (2006-01-02T15:04:05Z) or integer Unix seconds.", p)
			return time.Time{}, false
		}
		t = parsed.UTC()
	} else {
		sec, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || sec < -62135596800 || sec > 253402300799 {
			fs.Invalid(p.String(), "%s must be an RFC 3339 time (2006-01-02T15:04:05Z) or integer Unix seconds.", p)
			return time.Time{}, false
		}
		t = time.Unix(sec, 0).UTC()
	}
	if t.Before(now.Add(-MaxPast)) || t.After(now.Add(MaxFuture)) {
		fs.Invalid(p.String(), "%s must be within the last 35 days and at most 5 minutes ahead (got %s).", p, t.Format(time.RFC3339))
		return time.Time{}, false
	}
	return t, true
}
