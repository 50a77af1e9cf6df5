package webhookfilter

import (
	"strconv"
	"strings"

	"github.com/revops/revops/internal/platform/decimal"
	"github.com/revops/revops/internal/platform/textcheck"
)

// The limits of CONTRACT §25.
const (
	MaxBytes = 4096   // raw JSON of the filter, as sent
	MaxDepth = 8      // nested objects and arrays, the filter object being level 1
	MaxItems = 100    // items of one $in or $nin
	MaxSteps = 10_000 // static worst-case evaluation steps
)

// root is the JSON Pointer of the filter itself: faults name the API member "filter".
const root = "filter"

// Fault is why Parse refused a filter: Pointer is the JSON Pointer of the faulty value
// from "filter" (RFC 6901: "~" is written "~0" and "/" "~1"), Message says what is wrong
// with it, to be read after the pointer.
type Fault struct {
	Pointer string
	Message string
}

func (f *Fault) Error() string { return f.Pointer + " " + f.Message }

func fault(ptr, msg string) *Fault { return &Fault{Pointer: ptr, Message: msg} }

// Filter is a parsed filter, safe for concurrent use. A nil *Filter matches every
// payload (an endpoint without a filter).
type Filter struct {
	root  node
	steps int
	need  *need // what it reads of a payload
}

// Steps is the filter's static worst-case cost in evaluation steps (at most MaxSteps;
// 0 for a nil filter).
func (f *Filter) Steps() int {
	if f == nil {
		return 0
	}
	return f.steps
}

type limits struct{ bytes, depth, items, steps int }

var contractLimits = limits{bytes: MaxBytes, depth: MaxDepth, items: MaxItems, steps: MaxSteps}

// Parse validates raw (the filter's JSON as sent) and compiles it. Its error is a *Fault.
func Parse(raw []byte) (*Filter, error) { return parse(raw, contractLimits) }

func parse(raw []byte, lim limits) (*Filter, error) {
	if len(raw) > lim.bytes {
		return nil, fault(root, "is longer than "+strconv.Itoa(lim.bytes)+" bytes")
	}
	v, err := readJSON(raw, lim.depth)
	if err != nil {
		return nil, err
	}
	c := compiler{lim: lim}
	n, err := c.filter(newPointer(lim.depth), v)
	if err != nil {
		return nil, err
	}
	if c.steps > lim.steps {
		return nil, fault(root, "would take more than "+strconv.Itoa(lim.steps)+" evaluation steps")
	}
	return &Filter{root: n, steps: c.steps, need: needOf(&n)}, nil
}

type nodeKind uint8

const (
	nodeAnd nodeKind = iota
	nodeOr
	nodeNot
	nodePath
)

// node is a compiled condition: $and/$or/$not over kids, or ops on one path.
type node struct {
	kind nodeKind
	kids []node
	path []string
	ops  []op
}

type opKind uint8

const (
	opEq opKind = iota
	opNeq
	opIn
	opNin
	opGt
	opGte
	opLt
	opLte
	opExists
)

var compareOps = map[string]opKind{
	"$eq": opEq, "$neq": opNeq, "$in": opIn, "$nin": opNin,
	"$gt": opGt, "$gte": opGte, "$lt": opLt, "$lte": opLte, "$exists": opExists,
}

// op is one comparison: vals holds $eq/$neq's operand (one) or $in/$nin's items; a range
// operator's operand is str (a string: isStr) and/or dec (a number, or a string that is
// a decimal string: isDec).
type op struct {
	kind   opKind
	vals   []operand
	set    *itemSet // a long $in or $nin list's items by value
	str    string
	isStr  bool
	dec    decimal.Decimal
	isDec  bool
	exists bool
}

// operand is a JSON value to compare with, numbers read as decimals once; kids are an
// array's items (no key) or an object's members.
type operand struct {
	kind byte // as jval's
	b    bool
	str  string
	dec  decimal.Decimal
	kids []operandMember
}

type operandMember struct {
	key string
	val operand
}

type compiler struct {
	lim   limits
	steps int
}

func (c *compiler) filter(at pointer, v jval) (node, error) {
	if v.kind != 'o' {
		return node{}, at.fault("must be an object (a filter)")
	}
	c.steps++
	n := node{kind: nodeAnd}
	for _, m := range v.obj {
		kid, err := c.member(at, m)
		if err != nil {
			return node{}, err
		}
		n.kids = append(n.kids, kid)
	}
	if len(n.kids) == 1 {
		return n.kids[0], nil
	}
	return n, nil
}

func (c *compiler) member(parent pointer, m member) (node, error) {
	at := parent.key(m.key)
	switch m.key {
	case "$and", "$or":
		if m.val.kind != 'a' || len(m.val.arr) == 0 {
			return node{}, at.fault("must be a non-empty array of filters")
		}
		c.steps++
		n := node{kind: nodeAnd}
		if m.key == "$or" {
			n.kind = nodeOr
		}
		for i, item := range m.val.arr {
			kid, err := c.filter(at.index(i), item)
			if err != nil {
				return node{}, err
			}
			n.kids = append(n.kids, kid)
		}
		return n, nil
	case "$not":
		c.steps++
		kid, err := c.filter(at, m.val)
		if err != nil {
			return node{}, err
		}
		return node{kind: nodeNot, kids: []node{kid}}, nil
	}
	if strings.HasPrefix(m.key, "$") {
		if _, ok := compareOps[m.key]; ok {
			return node{}, at.fault("needs a path: write {\"path\": {\"" + m.key + "\": …}}")
		}
		return node{}, at.fault("is not an operator ($and, $or, $not, or a path)")
	}
	if err := textcheck.Line(m.key); err != nil {
		return node{}, parent.fault("has a path that " + err.Error())
	}
	return c.path(at, m)
}

func (c *compiler) path(at pointer, m member) (node, error) {
	segs := strings.Split(m.key, ".")
	for _, s := range segs {
		if s == "" {
			return node{}, at.fault("is not a path: dotted keys, none of them empty")
		}
	}
	for _, s := range segs {
		c.steps += 1 + byteSteps(len(s)) // a step per object walked, and the key's bytes
	}
	n := node{kind: nodePath, path: segs}
	v := m.val
	if v.kind != 'o' || len(v.obj) == 0 || !strings.HasPrefix(v.obj[0].key, "$") {
		// A bare value; an object in it may not hold operators.
		for _, om := range v.obj {
			if strings.HasPrefix(om.key, "$") {
				return node{}, at.key(om.key).fault("mixes an operator with fields: compare objects with {\"$eq\": …}")
			}
		}
		n.ops = []op{{kind: opEq, vals: []operand{c.value(v)}}}
		return n, nil
	}
	for _, om := range v.obj {
		o, err := c.op(at.key(om.key), om)
		if err != nil {
			return node{}, err
		}
		n.ops = append(n.ops, o)
	}
	return n, nil
}

func (c *compiler) op(at pointer, m member) (op, error) {
	kind, ok := compareOps[m.key]
	if !ok {
		if !strings.HasPrefix(m.key, "$") {
			return op{}, at.fault("mixes a field with operators: compare objects with {\"$eq\": …}")
		}
		return op{}, at.fault("is not a comparison operator ($eq, $neq, $in, $nin, $gt, $gte, $lt, $lte, $exists)")
	}
	v := m.val
	o := op{kind: kind}
	switch kind {
	case opEq, opNeq:
		o.vals = []operand{c.value(v)}
	case opIn, opNin:
		if v.kind != 'a' {
			return op{}, at.fault("must be an array")
		}
		if len(v.arr) > c.lim.items {
			return op{}, at.fault("has more than " + strconv.Itoa(c.lim.items) + " items")
		}
		c.steps++ // an empty $in still costs its test
		o.vals = make([]operand, len(v.arr))
		for i, item := range v.arr {
			o.vals[i] = c.value(item)
		}
		if len(o.vals) >= minSetItems {
			o.set = newItemSet(o.vals)
		}
	case opExists:
		if v.kind != 'b' {
			return op{}, at.fault("must be true or false")
		}
		c.steps++
		o.exists = v.b
	default: // range
		switch v.kind {
		case 'n':
			o.dec, o.isDec = decimal.ParseNumber(v.str)
		case 's':
			o.str, o.isStr = v.str, true
			o.dec, o.isDec = decimal.ParseString(v.str)
		default:
			return op{}, at.fault("must be a number or a string")
		}
		c.steps += 1 + byteSteps(max(len(o.str), o.dec.Digits()))
	}
	return o, nil
}

// value turns a JSON value into an operand, counting a step per value compared and the
// bytes a comparison with it may examine: a string's, a number's digits, a member's name.
func (c *compiler) value(v jval) operand {
	c.steps++
	o := operand{kind: v.kind, str: v.str, b: v.b}
	switch v.kind {
	case 'o':
		o.kids = make([]operandMember, len(v.obj))
		for i, m := range v.obj {
			c.steps += byteSteps(len(m.key))
			o.kids[i] = operandMember{key: m.key, val: c.value(m.val)}
		}
	case 'a':
		o.kids = make([]operandMember, len(v.arr))
		for i, item := range v.arr {
			o.kids[i] = operandMember{val: c.value(item)}
		}
	case 'n':
		o.dec, _ = decimal.ParseNumber(v.str)
		c.steps += byteSteps(o.dec.Digits())
	case 's':
		c.steps += byteSteps(len(v.str))
	}
	return o
}
