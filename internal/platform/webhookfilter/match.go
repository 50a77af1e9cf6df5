package webhookfilter

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/revops/revops/internal/platform/decimal"
)

// BytesPerStep is how many bytes a comparison examines per evaluation step: comparing
// long strings or numbers costs their length, so that the step bound (MaxSteps) bounds
// the CPU an evaluation takes, not only the comparisons it makes (CONTRACT §21).
const BytesPerStep = 16

// byteSteps is what examining n bytes costs beyond a comparison's own step.
func byteSteps(n int) int { return n / BytesPerStep }

// ErrTooCostly is an evaluation stopped at MaxSteps. Parse refuses every filter that could
// get there, so it is a defence in depth: the bound holds at run time whatever Parse
// counted.
var ErrTooCostly = errors.New("would take more than " + strconv.Itoa(MaxSteps) + " evaluation steps")

// errNotRead is a Doc evaluated by a filter its Reader was not made for: it may lack what
// the filter reads.
var errNotRead = errors.New("the payload was not decoded for this filter")

// Match decodes payload for the filter and evaluates the filter on it.
func (f *Filter) Match(payload []byte) (bool, error) {
	d, err := NewReader(f).Decode(payload)
	if err != nil {
		return false, err
	}
	return f.MatchDoc(d)
}

// MatchDoc evaluates the filter on a payload decoded by a Reader made for it, within
// MaxSteps steps (else ErrTooCostly). A nil filter matches.
func (f *Filter) MatchDoc(d Doc) (bool, error) {
	ok, _, err := f.eval(d)
	return ok, err
}

// eval is MatchDoc telling also the steps it took.
func (f *Filter) eval(d Doc) (bool, int, error) {
	if f == nil {
		return true, 0, nil
	}
	if !slices.Contains(d.filters, f) {
		return false, 0, errNotRead
	}
	e := evaluation{left: MaxSteps}
	ok := e.node(&f.root, d.v)
	if e.left < 0 {
		return false, MaxSteps, ErrTooCostly
	}
	return ok, MaxSteps - e.left, nil
}

// evaluation is one filter evaluated on one payload: left is how many steps it may still
// take. Every step it takes is one Parse counted (steps), so left never runs out for a
// filter Parse took; once it has, every test is false at once.
type evaluation struct{ left int }

func (e *evaluation) spend(n int) bool {
	e.left -= n
	return e.left >= 0
}

func (e *evaluation) node(n *node, doc any) bool {
	switch n.kind {
	case nodeAnd:
		if !e.spend(1) {
			return false
		}
		for i := range n.kids {
			if !e.node(&n.kids[i], doc) {
				return false
			}
		}
		return true
	case nodeOr:
		if !e.spend(1) {
			return false
		}
		for i := range n.kids {
			if e.node(&n.kids[i], doc) {
				return true
			}
		}
		return false
	case nodeNot:
		return e.spend(1) && !e.node(&n.kids[0], doc)
	}
	v, found := e.lookup(doc, n.path)
	for i := range n.ops {
		if !e.op(&n.ops[i], v, found) {
			return false
		}
	}
	return true
}

// lookup walks objects only: a path never indexes or fans out over an array.
func (e *evaluation) lookup(doc any, path []string) (any, bool) {
	cur := doc
	for _, seg := range path {
		obj, ok := cur.(*object)
		if !ok || !e.spend(1+byteSteps(len(seg))) {
			return nil, false
		}
		if cur, ok = obj.m[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func (e *evaluation) op(o *op, v any, found bool) bool {
	switch o.kind {
	case opExists:
		return e.spend(1) && found == o.exists
	case opEq:
		return found && e.anyEqual(o, v)
	case opNeq:
		return !found || !e.anyEqual(o, v)
	case opIn:
		return e.spend(1) && found && e.anyEqual(o, v)
	case opNin:
		return e.spend(1) && (!found || !e.anyEqual(o, v))
	}
	if !e.spend(1) || !found {
		return false
	}
	c, ok := e.compare(o, v)
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

func (e *evaluation) anyEqual(o *op, v any) bool {
	if o.set != nil {
		return e.inSet(o, v)
	}
	for i := range o.vals {
		if e.equal(&o.vals[i], v) {
			return true
		}
	}
	return false
}

// equal compares an operand with a payload value as JSON (see the package comment),
// spending a step and one per BytesPerStep bytes it examines.
func (e *evaluation) equal(want *operand, v any) bool {
	switch want.kind {
	case 's':
		s, ok := stringOf(v)
		examined := 0
		if ok && len(s) == len(want.str) { // strings of other lengths differ at once
			examined = len(s)
		}
		return e.spend(1+byteSteps(examined)) && ok && s == want.str
	case 'n':
		d, ok := v.(*decimal.Decimal)
		examined := 0
		if ok {
			examined = min(d.Digits(), want.dec.Digits())
		}
		return e.spend(1+byteSteps(examined)) && ok && d.Cmp(&want.dec) == 0
	}
	if !e.spend(1) {
		return false
	}
	switch want.kind {
	case 'z':
		return v == nil
	case 'b':
		b, ok := v.(bool)
		return ok && b == want.b
	case 'a': // the Reader kept the items of an array of this length
		a, ok := v.(*array)
		if !ok || a.n != len(want.kids) {
			return false
		}
		for i := range want.kids {
			if !e.equal(&want.kids[i].val, a.items[i]) {
				return false
			}
		}
		return true
	case 'o': // the Reader counted the members and kept those of these names
		o, ok := v.(*object)
		if !ok || o.n != len(want.kids) {
			return false
		}
		for i := range want.kids {
			k := &want.kids[i]
			if !e.spend(byteSteps(len(k.key))) {
				return false
			}
			mv, ok := o.m[k.key]
			if !ok || !e.equal(&k.val, mv) {
				return false
			}
		}
		return true
	}
	return false
}

// stringOf is a payload string's text, decimal or not.
func stringOf(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case *decString:
		return s.s, true
	}
	return "", false
}

// compare orders the payload value v against a range operand: as exact decimals when
// both are numbers or decimal strings, by code points when both are strings, else not.
// It spends what it examines (the op's own step is spent by the caller).
func (e *evaluation) compare(o *op, v any) (int, bool) {
	var d *decimal.Decimal
	switch x := v.(type) {
	case *decimal.Decimal:
		d = x
	case *decString:
		if !o.isDec {
			return e.compareText(o, x.s)
		}
		d = &x.d
	case string:
		return e.compareText(o, x)
	default:
		return 0, false
	}
	if !o.isDec || !e.spend(byteSteps(min(d.Digits(), o.dec.Digits()))) {
		return 0, false
	}
	return d.Cmp(&o.dec), true
}

// compareText orders s against a string operand by code points.
func (e *evaluation) compareText(o *op, s string) (int, bool) {
	if !o.isStr || !e.spend(byteSteps(min(len(s), len(o.str)))) {
		return 0, false
	}
	return strings.Compare(s, o.str), true
}
