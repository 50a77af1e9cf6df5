package usage

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"sort"
	"strings"
)

// canonicalHash hashes a valid JSON value by value: object keys sorted, whitespace gone,
// numbers in one form (1, 1.0 and 1e0 alike), strings with one escaping.
func canonicalHash(raw []byte) [32]byte {
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

func writeCanonical(buf *bytes.Buffer, v any) {
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
			writeCanonical(buf, x[k])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeCanonical(buf, e)
		}
		buf.WriteByte(']')
	case json.Number:
		buf.WriteString(canonicalNumber(string(x)))
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

// canonicalNumber gives equal numbers one spelling; numbers outside what Decimal holds
// exactly keep a normalised spelling of their own text.
func canonicalNumber(s string) string {
	if d, _, err := parseLiteral(s); err == nil {
		return d.String()
	}
	return strings.ToLower(s)
}
