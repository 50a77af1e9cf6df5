// Package fingerprint identifies a JSON request body by value (CONTRACT §5 and §14): key
// order, whitespace, string escapes and the spelling of numbers (1, 1.0, 1e0) do not
// change it. It works on hostile input in time and memory proportional to the body: a
// number is rewritten as digits and an exponent, never expanded (1e-99999 stays short).
package fingerprint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Of returns the hex SHA-256 of body's canonical form. A body that is not one JSON value
// (empty, malformed, trailing data) is hashed as its raw bytes under another prefix, so
// it equals only the same bytes and never a valid body.
func Of(body []byte) string {
	var buf bytes.Buffer
	if canonical(&buf, body) {
		return hash("json:", buf.Bytes())
	}
	return hash("raw:", body)
}

func hash(prefix string, b []byte) string {
	h := sha256.New()
	h.Write([]byte(prefix))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func canonical(buf *bytes.Buffer, body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		return false
	}
	Write(buf, v, Number)
	return true
}

// Write writes v, a value decoded with UseNumber, with object keys sorted, no whitespace
// and strings as json.Marshal escapes them; number gives each number literal's text. Its
// output is stored (idempotency fingerprints here, usage_batches.body_hash in
// internal/domain/usage with its own number rule), so it must never change.
func Write(buf *bytes.Buffer, v any, number func(lit string) string) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			Write(buf, x[k], number)
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			Write(buf, e, number)
		}
		buf.WriteByte(']')
	case json.Number:
		buf.WriteString(number(string(x)))
	case string:
		writeString(buf, x)
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	default:
		buf.WriteString("null")
	}
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // cannot fail for a string
	buf.Write(b)
}

// Number gives every spelling of one JSON number value one text: "0", or an optional
// "-", the significant digits without trailing zeros, "e" and the decimal exponent of
// the last digit ("15e1" for 150, 1.5e2 and 150.0). No digit is ever produced from an
// exponent, so the text stays about as long as the literal. Text that is not a JSON
// number is returned unchanged.
func Number(lit string) string {
	mant, exp, hasExp := strings.Cut(strings.ToLower(lit), "e")
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	intPart, frac, _ := strings.Cut(mant, ".")
	if !digitsOnly(intPart) || intPart == "" || !digitsOnly(frac) {
		return lit
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	trimmed := strings.TrimRight(digits, "0")
	if trimmed == "" {
		return "0" // zero, whatever its sign or exponent
	}
	// value = trimmed × 10^(e − len(frac) + trailing zeros). An exponent of more than
	// 18 digits is no number any route accepts: it keeps its own spelling (equal only
	// to itself) rather than costing big-number arithmetic on hostile input.
	var e int64
	if hasExp {
		neg := strings.HasPrefix(exp, "-")
		mag := strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")
		if len(mag) > 18 || !digitsOnly(mag) || strings.Count(exp, "-")+strings.Count(exp, "+") > 1 {
			return strings.ToLower(lit)
		}
		if mag != "" {
			v, err := strconv.ParseInt(mag, 10, 64)
			if err != nil {
				return strings.ToLower(lit)
			}
			e = v
			if neg {
				e = -v
			}
		}
	}
	e += int64(len(digits)-len(trimmed)) - int64(len(frac)) // |…| ≤ 1 MiB: no overflow
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + strconv.FormatInt(e, 10)
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
