package usage

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"strings"

	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/fingerprint"
)

// canonicalHash hashes a valid JSON value by value: object keys sorted, whitespace gone,
// numbers in one form (1, 1.0 and 1e0 alike), strings with one escaping (encoding/json's:
// HTML characters escaped, bad UTF-8 as U+FFFD), the last of duplicate keys. Hashes are
// stored (usage_batches.body_hash), so this text must never change: the fast path for flat
// objects writes exactly what writeCanonical writes (reforig_test.go checks it).
func canonicalHash(raw []byte) [32]byte {
	if buf, ok := flatCanonical(raw); ok {
		return sha256.Sum256(buf)
	}
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

// member is an object member: its decoded key and its value's bytes.
type member struct {
	key string
	val []byte
}

// flatCanonical writes the canonical form of the usual metadata, an object whose values
// are strings, numbers, true, false or null, in one scan and without building a map. ok
// is false for anything else (nested values go through writeCanonical).
func flatCanonical(raw []byte) ([]byte, bool) {
	s := scanner{data: raw}
	if s.peek() != '{' {
		return nil, false
	}
	var arr [8]member
	ms := arr[:0]
	ok := s.object(func(key []byte, escaped bool) bool {
		if c := s.peek(); c == '{' || c == '[' {
			return false
		}
		sp, ok := s.value()
		ms = append(ms, member{keyName(key, escaped), raw[sp.start:sp.end]})
		return ok
	})
	if !ok || !s.atEnd() {
		return nil, false
	}
	slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	buf := make([]byte, 0, len(raw)+16)
	buf = append(buf, '{')
	first := true
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].key == m.key {
			continue // of equal keys the last one counts, as in a map
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = appendCanonicalString(buf, quoted([]byte(m.key)))
		buf = append(buf, ':')
		switch m.val[0] {
		case '"':
			buf = appendCanonicalString(buf, m.val)
		case 't', 'f', 'n':
			buf = append(buf, m.val...)
		default:
			buf = append(buf, decimal.CanonicalNumber(string(m.val))...)
		}
	}
	return append(buf, '}'), true
}

// writeCanonical is fingerprint's walker with this package's number rule: where
// fingerprint.Number only respells a literal, decimal.CanonicalNumber writes it as a
// Decimal.
func writeCanonical(buf *bytes.Buffer, v any) {
	fingerprint.Write(buf, v, decimal.CanonicalNumber)
}

// appendCanonicalString appends the string literal raw (quotes included) as json.Marshal
// writes its decoded value. Plain ASCII without characters to escape is that already.
func appendCanonicalString(buf, raw []byte) []byte {
	plain := true
	for _, ch := range raw[1 : len(raw)-1] {
		if ch < 0x20 || ch > 0x7e || ch == '"' || ch == '\\' || ch == '<' || ch == '>' || ch == '&' {
			plain = false
			break
		}
	}
	if plain {
		return append(buf, raw...)
	}
	var s string
	_ = json.Unmarshal(raw, &s) // valid: the scanner checked it
	b, _ := json.Marshal(s)     // cannot fail for a string
	return append(buf, b...)
}
