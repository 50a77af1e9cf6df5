package webhookfilter

import (
	"strconv"
	"strings"

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
}

// Steps is the filter's static worst-case cost in evaluation steps (at most MaxSteps).
func (f *Filter) Steps() int { return f.steps }

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
	n, err := c.filter(v)
	if err != nil {
		return nil, err
	}
	if c.steps > lim.steps {
		return nil, fault(root, "would take more than "+strconv.Itoa(lim.steps)+" evaluation steps")
	}
	return &Filter{root: n, steps: c.steps}, nil
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

// op is one comparison: vals holds $eq/$neq's operand (one) or $in/$nin's items as
// operand values (see value); a range operator's operand is str (a string) and/or dec
// (a number, or a string that is a decimal string: isDec).
type op struct {
	kind   opKind
	vals   []any
	str    string
	isStr  bool
	dec    decimal
	isDec  bool
	exists bool
}

// operand values: nil, bool, string, number, []any, map[string]any.
type number struct{ d decimal }

type compiler struct {
	lim   limits
	steps int
}

func (c *compiler) filter(v jval) (node, error) {
	if v.kind != 'o' {
		return node{}, fault(v.ptr, "must be an object (a filter)")
	}
	c.steps++
	n := node{kind: nodeAnd}
	for _, m := range v.obj {
		kid, err := c.member(m)
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

func (c *compiler) member(m member) (node, error) {
	switch m.key {
	case "$and", "$or":
		if m.val.kind != 'a' || len(m.val.arr) == 0 {
			return node{}, fault(m.val.ptr, "must be a non-empty array of filters")
		}
		c.steps++
		n := node{kind: nodeAnd}
		if m.key == "$or" {
			n.kind = nodeOr
		}
		for _, item := range m.val.arr {
			kid, err := c.filter(item)
			if err != nil {
				return node{}, err
			}
			n.kids = append(n.kids, kid)
		}
		return n, nil
	case "$not":
		c.steps++
		kid, err := c.filter(m.val)
		if err != nil {
			return node{}, err
		}
		return node{kind: nodeNot, kids: []node{kid}}, nil
	}
	if strings.HasPrefix(m.key, "$") {
		if _, ok := compareOps[m.key]; ok {
			return node{}, fault(m.val.ptr, "needs a path: write {\"path\": {\""+m.key+"\": …}}")
		}
		return node{}, fault(m.val.ptr, "is not an operator ($and, $or, $not, or a path)")
	}
	return c.path(m)
}

func (c *compiler) path(m member) (node, error) {
	parent := m.val.ptr[:strings.LastIndexByte(m.val.ptr, '/')]
	if err := textcheck.Line(m.key); err != nil {
		return node{}, fault(parent, "has a path that "+err.Error())
	}
	segs := strings.Split(m.key, ".")
	for _, s := range segs {
		if s == "" {
			return node{}, fault(m.val.ptr, "is not a path: dotted keys, none of them empty")
		}
	}
	c.steps += len(segs)
	n := node{kind: nodePath, path: segs}
	v := m.val
	if v.kind != 'o' || len(v.obj) == 0 || !strings.HasPrefix(v.obj[0].key, "$") {
		// A bare value; an object in it may not hold operators.
		for _, om := range v.obj {
			if strings.HasPrefix(om.key, "$") {
				return node{}, fault(om.val.ptr, "mixes an operator with fields: compare objects with {\"$eq\": …}")
			}
		}
		n.ops = []op{{kind: opEq, vals: []any{c.value(v)}}}
		return n, nil
	}
	for _, om := range v.obj {
		o, err := c.op(om)
		if err != nil {
			return node{}, err
		}
		n.ops = append(n.ops, o)
	}
	return n, nil
}

func (c *compiler) op(m member) (op, error) {
	kind, ok := compareOps[m.key]
	if !ok {
		if !strings.HasPrefix(m.key, "$") {
			return op{}, fault(m.val.ptr, "mixes a field with operators: compare objects with {\"$eq\": …}")
		}
		return op{}, fault(m.val.ptr, "is not a comparison operator ($eq, $neq, $in, $nin, $gt, $gte, $lt, $lte, $exists)")
	}
	v := m.val
	o := op{kind: kind}
	switch kind {
	case opEq, opNeq:
		o.vals = []any{c.value(v)}
	case opIn, opNin:
		if v.kind != 'a' {
			return op{}, fault(v.ptr, "must be an array")
		}
		if len(v.arr) > c.lim.items {
			return op{}, fault(v.ptr, "has more than "+strconv.Itoa(c.lim.items)+" items")
		}
		c.steps++ // an empty $in still costs its test
		for _, item := range v.arr {
			o.vals = append(o.vals, c.value(item))
		}
	case opExists:
		if v.kind != 'b' {
			return op{}, fault(v.ptr, "must be true or false")
		}
		c.steps++
		o.exists = v.b
	default: // range
		c.steps++
		switch v.kind {
		case 'n':
			o.dec, o.isDec = parseNumber(v.str)
		case 's':
			o.str, o.isStr = v.str, true
			o.dec, o.isDec = parseDecimalString(v.str)
		default:
			return op{}, fault(v.ptr, "must be a number or a string")
		}
	}
	return o, nil
}

// value turns a JSON value into an operand, counting a step per value compared.
func (c *compiler) value(v jval) any {
	c.steps++
	switch v.kind {
	case 'o':
		m := make(map[string]any, len(v.obj))
		for _, om := range v.obj {
			m[om.key] = c.value(om.val)
		}
		return m
	case 'a':
		a := make([]any, len(v.arr))
		for i, item := range v.arr {
			a[i] = c.value(item)
		}
		return a
	case 's':
		return v.str
	case 'n':
		d, _ := parseNumber(v.str)
		return number{d}
	case 'b':
		return v.b
	}
	return nil
}
