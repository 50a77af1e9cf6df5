package webhookfilter

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/jsonnum"
)

// A Reader decodes payloads for a set of filters (the endpoints one event fans out to, or
// the one filter a test evaluates): of each payload it builds only what those filters can
// read, and skips over the rest checking its syntax only. So decoding costs one pass over
// the payload's bytes plus at most what the filters themselves hold (CONTRACT §21),
// whatever the payload is made of; a payload of a million tiny values costs its bytes, not
// a million values built. A Reader is safe for concurrent use.
type Reader struct {
	filters []*Filter
	need    *need // nil: nothing but the root's kind
}

// NewReader is a Reader for filters (nil ones, which match everything, read nothing).
func NewReader(filters ...*Filter) *Reader {
	rd := &Reader{filters: filters}
	var needs []*need
	for _, f := range filters {
		if f != nil {
			needs = append(needs, f.need)
		}
	}
	switch len(needs) {
	case 0:
	case 1:
		rd.need = needs[0]
	default:
		rd.need = &need{}
		for _, n := range needs {
			rd.need.merge(n)
		}
	}
	return rd
}

// Doc is a payload decoded once for the filters of its Reader. Every number and decimal
// string a filter can read is an exact decimal, read here once (CONTRACT §21: once per
// event, never once per comparison), so that what a comparison costs depends on the
// filter's operand alone. Its values are nil, bool, string, *decimal.Decimal (a number),
// *decString, *array and *object; strings are substrings of the payload's text.
type Doc struct {
	v       any
	filters []*Filter
}

// decString is a payload string that is a decimal string (see parseDecimalString), with
// its value.
type decString struct {
	s string
	d decimal.Decimal
}

// object is a payload object: the members a filter can read, and how many members it has
// as sent (-1 when no object operand is compared with it: not counted).
type object struct {
	m map[string]any
	n int
}

// array is a payload array: its length, and its items when an array operand of that
// length is compared with it (nil otherwise).
type array struct {
	items []any
	n     int
}

// MaxDocDepth bounds how deep a payload may nest: request bodies nest at most 64 levels
// (the API's rule) and a delivered body wraps a snapshot in one more.
const MaxDocDepth = 128

// Decode reads payload (a JSON value; a body is an object) for the Reader's filters. A
// number of any length is read (past expCap its exponent saturates): a payload a client
// sends is held to §15's number rule before it gets here (jsonnum.FirstFault), and the
// payloads Revops writes hold only numbers it checked.
func (rd *Reader) Decode(payload []byte) (Doc, error) {
	r := &reader{s: payload, text: string(payload), maxDepth: MaxDocDepth}
	v, err := r.build(rd.need, 0)
	if r.ws(); err == nil && r.i != len(r.s) {
		err = errors.New("has data after the JSON value")
	}
	if err != nil {
		return Doc{}, fmt.Errorf("payload %w (at byte %d)", err, r.i)
	}
	return Doc{v: v, filters: rd.filters}, nil
}

// enter steps into a container at r.i, within the depth bound.
func (r *reader) enter(depth int) error {
	if depth+1 > r.maxDepth {
		return errors.New("is nested more than " + strconv.Itoa(r.maxDepth) + " levels deep")
	}
	r.i++
	return nil
}

// build reads the value at r.i, building what n reads of it.
func (r *reader) build(n *need, depth int) (any, error) {
	switch c := r.next(); {
	case c == '{' && (n == nil || n.members == nil && !n.count):
		return &object{n: -1}, r.skipValue(depth) // kept as an object: no filter reads in it
	case c == '[' && (n == nil || n.lengths == nil):
		return &array{n: -1}, r.skipValue(depth)
	case c == '{' || c == '[':
		if err := r.enter(depth); err != nil {
			return nil, err
		}
		if c == '{' {
			return r.buildObject(n, depth+1)
		}
		return r.buildArray(n, depth+1)
	case c == '"':
		s, err := r.string()
		if err != nil {
			return nil, err
		}
		if d, ok := decimal.ParseString(s); ok {
			return &decString{s: s, d: d}, nil
		}
		return s, nil
	case c == '-' || isDigit(c):
		lit, err := r.jsonNumber()
		if err != nil {
			return nil, err
		}
		d, _ := decimal.ParseNumber(lit) // every JSON number parses
		return &d, nil
	}
	lit, ok := r.literal()
	switch {
	case !ok:
		return nil, errSyntax
	case lit.kind == 'b':
		return lit.b, nil
	}
	return nil, nil
}

// buildObject reads an object's members after its "{": those n reads are built, the
// others skipped (and counted, when an object operand is compared here). A name given
// twice among those n reads is refused: which value it names is not defined (RFC 8259
// §4), filters refuse it in themselves, and keeping the last would mean building every
// one. Other names given twice change no answer: an object equals an operand only when
// every name it has is one the operand has, so counting them as sent is exact.
func (r *reader) buildObject(n *need, depth int) (*object, error) {
	o := &object{n: -1}
	if n.count {
		o.n = 0
	}
	err := r.each('}', func() error {
		key, err := r.memberName()
		if err != nil {
			return err
		}
		if n.count {
			o.n++
		}
		kid, ok := n.members[key]
		if !ok {
			return r.skipValue(depth)
		}
		if _, built := o.m[key]; built {
			return fmt.Errorf("names the member %q twice in one object", key)
		}
		v, err := r.build(kid, depth)
		if o.m == nil {
			o.m = map[string]any{}
		}
		o.m[key] = v
		return err
	})
	return o, err
}

// buildArray reads an array's items after its "[": the first ones n reads are built
// (what an operand of that length compares) and kept if the array has the length of one.
func (r *reader) buildArray(n *need, depth int) (*array, error) {
	a := &array{}
	var items []any
	err := r.each(']', func() error {
		defer func() { a.n++ }()
		if a.n >= len(n.items) {
			return r.skipValue(depth)
		}
		v, err := r.build(n.items[a.n], depth)
		items = append(items, v)
		return err
	})
	if slices.Contains(n.lengths, a.n) {
		a.items = items
	}
	return a, err
}

// each calls elem once per member or item of the object or array whose opening was just
// read (closing is its '}' or ']'), with r.i at the member's name or the item.
func (r *reader) each(closing byte, elem func() error) error {
	if r.next() == closing {
		r.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch r.next() {
		case ',':
			r.i++
		case closing:
			r.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// memberName reads a member's name and the ":" after it.
func (r *reader) memberName() (string, error) {
	if r.next() != '"' {
		return "", errSyntax
	}
	key, err := r.string()
	if err != nil {
		return "", err
	}
	if r.next() != ':' {
		return "", errSyntax
	}
	r.i++
	return key, nil
}

// skipValue moves past the value at r.i checking its syntax only: nothing is built.
func (r *reader) skipValue(depth int) error {
	if c := r.next(); c != '{' && c != '[' {
		return r.skipScalar(c)
	}
	stack, err := r.skipNested(depth, r.open[:0])
	r.open = stack[:0]
	return err
}

// skipScalar moves past the string, number or literal at r.i, whose first byte is c.
func (r *reader) skipScalar(c byte) error {
	switch {
	case c == '"':
		_, _, _, err := r.scanString()
		return err
	case c == '-' || isDigit(c):
		_, err := r.jsonNumber()
		return err
	}
	if _, ok := r.literal(); !ok {
		return errSyntax
	}
	return nil
}

// skipNested moves past the object or array at r.i: a loop over the bytes with a stack of
// the containers it is in, not a call per value (skipping is what most of a large payload
// costs). It returns the stack to be kept for reuse.
func (r *reader) skipNested(depth int, stack []byte) ([]byte, error) {
	for {
		// A value.
		if c := r.next(); c == '{' || c == '[' {
			if depth+len(stack)+1 > r.maxDepth {
				return stack, errors.New("is nested more than " + strconv.Itoa(r.maxDepth) + " levels deep")
			}
			r.i++
			if r.next() != c+2 { // not empty: '}' is '{'+2, ']' is '['+2
				stack = append(stack, c)
				if c == '{' {
					if err := r.skipName(); err != nil {
						return stack, err
					}
				}
				continue
			}
			r.i++
		} else if err := r.skipScalar(c); err != nil {
			return stack, err
		}
		// After a value: the next one, or the ends of containers.
		for {
			if len(stack) == 0 {
				return stack, nil
			}
			top := stack[len(stack)-1]
			c := r.next()
			if c == ',' {
				r.i++
				if top == '{' {
					if err := r.skipName(); err != nil {
						return stack, err
					}
				}
				break
			}
			if c != top+2 {
				return stack, errSyntax
			}
			r.i++
			stack = stack[:len(stack)-1]
		}
	}
}

// skipName moves past a member's name and the ":" after it.
func (r *reader) skipName() error {
	if r.next() != '"' {
		return errSyntax
	}
	if _, _, _, err := r.scanString(); err != nil {
		return err
	}
	if r.next() != ':' {
		return errSyntax
	}
	r.i++
	return nil
}

// jsonNumber reads the number literal at r.i, whatever its length, checking its syntax.
func (r *reader) jsonNumber() (string, error) {
	end, ok := jsonnum.LiteralEnd(r.s, r.i)
	if !ok {
		return "", errSyntax
	}
	lit := r.text[r.i:end]
	r.i = end
	return lit, nil
}
