package webhookfilter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Doc is a payload decoded once for any number of filters. Numbers stay as their JSON
// text (json.Number) so that they compare exactly.
type Doc struct{ v any }

// Decode reads a payload (any JSON value; a body is an object) for MatchDoc.
func Decode(payload []byte) (Doc, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Doc{}, fmt.Errorf("decode payload: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Doc{}, errors.New("decode payload: data after the JSON value")
	}
	return Doc{v: v}, nil
}

// Match decodes payload and evaluates the filter on it; the error is only the payload's.
func (f *Filter) Match(payload []byte) (bool, error) {
	d, err := Decode(payload)
	if err != nil {
		return false, err
	}
	return f.MatchDoc(d), nil
}

// MatchDoc evaluates the filter on a decoded payload. A nil filter matches.
func (f *Filter) MatchDoc(d Doc) bool {
	if f == nil {
		return true
	}
	return f.root.match(d.v)
}

func (n *node) match(doc any) bool {
	switch n.kind {
	case nodeAnd:
		for i := range n.kids {
			if !n.kids[i].match(doc) {
				return false
			}
		}
		return true
	case nodeOr:
		for i := range n.kids {
			if n.kids[i].match(doc) {
				return true
			}
		}
		return false
	case nodeNot:
		return !n.kids[0].match(doc)
	}
	v, found := lookup(doc, n.path)
	for i := range n.ops {
		if !n.ops[i].match(v, found) {
			return false
		}
	}
	return true
}

// lookup walks objects only: a path never indexes or fans out over an array.
func lookup(doc any, path []string) (any, bool) {
	cur := doc
	for _, seg := range path {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func (o *op) match(v any, found bool) bool {
	switch o.kind {
	case opExists:
		return found == o.exists
	case opEq, opIn:
		return found && o.anyEqual(v)
	case opNeq, opNin:
		return !found || !o.anyEqual(v)
	}
	if !found {
		return false
	}
	c, ok := o.compare(v)
	if !ok {
		return false
	}
	switch o.kind {
	case opGt:
		return c > 0
	case opGte:
		return c >= 0
	case opLt:
		return c < 0
	}
	return c <= 0
}

func (o *op) anyEqual(v any) bool {
	for i := range o.vals {
		if equal(&o.vals[i], v) {
			return true
		}
	}
	return false
}

// equal compares an operand with a payload value as JSON (see the package comment).
func equal(want *operand, v any) bool {
	switch want.kind {
	case 'z':
		return v == nil
	case 'b':
		b, ok := v.(bool)
		return ok && b == want.b
	case 's':
		s, ok := v.(string)
		return ok && s == want.str
	case 'n':
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		d, ok := parseNumber(string(n))
		return ok && cmpDecimal(d, want.dec) == 0
	case 'a':
		a, ok := v.([]any)
		if !ok || len(a) != len(want.kids) {
			return false
		}
		for i := range want.kids {
			if !equal(&want.kids[i].val, a[i]) {
				return false
			}
		}
		return true
	case 'o':
		m, ok := v.(map[string]any)
		if !ok || len(m) != len(want.kids) {
			return false
		}
		for i := range want.kids {
			mv, ok := m[want.kids[i].key]
			if !ok || !equal(&want.kids[i].val, mv) {
				return false
			}
		}
		return true
	}
	return false
}

// compare orders the payload value v against a range operand: as exact decimals when
// both are numbers or decimal strings, by code points when both are strings, else not.
func (o *op) compare(v any) (int, bool) {
	switch x := v.(type) {
	case json.Number:
		if !o.isDec {
			return 0, false
		}
		d, ok := parseNumber(string(x))
		if !ok {
			return 0, false
		}
		return cmpDecimal(d, o.dec), true
	case string:
		if o.isDec {
			if d, ok := parseDecimalString(x); ok {
				return cmpDecimal(d, o.dec), true
			}
		}
		if o.isStr {
			return strings.Compare(x, o.str), true
		}
	}
	return 0, false
}
