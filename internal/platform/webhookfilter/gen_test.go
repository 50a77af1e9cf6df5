package webhookfilter_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
)

// Random payloads and filters over a small vocabulary, so that paths hit, miss, cross
// arrays and scalars, and values of every kind meet every operator.

var (
	genKeys    = []string{"a", "b", "deal"}
	genNumbers = []string{"0", "-0", "0.0", "1", "1.0", "1e0", "10", "1e1", "0.1", "1E-1", "-1", "-1.5",
		"99.99", "100", "100.00", "1e2", "19999.00", "19999", "12345678901234567890.5", "-12345678901234567890.5",
		"0.000000000000000000001", "1e-21", "7",
		// Apart only beyond float64's precision: an evaluator that rounds confuses them.
		"9007199254740993", "9007199254740992", "100.0000000000000000001", "0.10000000000000000001"}
	genStrings = []string{"", "a", "b", "abc", "ABC", "é", "ё", "😀", "\uffff", "1", "1.0", "01", "007", "7",
		"-0", "0", "100", "100.00", "100.0000000000000000001", "9007199254740993", "19999.00", "20000", "99.99", "1e2", "+1", ".5", "5.", "1 ", "-", "-1.5", "a.b"}
)

type gen struct{ r *rand.Rand }

func (g gen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g gen) scalar() any {
	switch g.r.IntN(6) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2, 3:
		return json.Number(g.pick(genNumbers))
	}
	return g.pick(genStrings)
}

// value is a JSON value at most depth containers deep.
func (g gen) value(depth int) any {
	if depth == 0 || g.r.IntN(4) != 0 {
		return g.scalar()
	}
	if g.r.IntN(2) == 0 {
		a := make([]any, g.r.IntN(3))
		for i := range a {
			a[i] = g.value(depth - 1)
		}
		return a
	}
	m := map[string]any{}
	for range g.r.IntN(3) {
		m[g.pick(genKeys)] = g.value(depth - 1)
	}
	return m
}

func (g gen) payload() map[string]any {
	m := map[string]any{}
	for _, k := range genKeys {
		if g.r.IntN(4) != 0 {
			m[k] = g.node(3)
		}
	}
	return m
}

// node is an object-rich value so that dotted paths often resolve.
func (g gen) node(depth int) any {
	if depth == 0 || g.r.IntN(3) == 0 {
		return g.value(1)
	}
	m := map[string]any{}
	for _, k := range genKeys {
		if g.r.IntN(2) == 0 {
			m[k] = g.node(depth - 1)
		}
	}
	return m
}

func (g gen) path() string {
	segs := make([]string, 1+g.r.IntN(3))
	for i := range segs {
		segs[i] = g.pick(genKeys)
	}
	return strings.Join(segs, ".")
}

var genOps = []string{"$eq", "$neq", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists"}

// filter is a filter object at JSON depth level (1 for the whole filter): combinators
// only while the result stays within the package's 8 levels.
func (g gen) filter(level int) map[string]any {
	f := map[string]any{}
	for range 1 + g.r.IntN(2) {
		switch k := g.r.IntN(8); {
		case k == 0 && level <= 3, k == 1 && level <= 3:
			items := make([]any, 1+g.r.IntN(3))
			for i := range items {
				items[i] = g.filter(level + 2)
			}
			f[[]string{"$and", "$or"}[k]] = items
		case k == 2 && level <= 4:
			f["$not"] = g.filter(level + 1)
		default:
			f[g.path()] = g.cond()
		}
	}
	return f
}

// cond is a bare value or an operator object; its containers add at most 3 levels.
func (g gen) cond() any {
	if g.r.IntN(4) == 0 {
		v := g.value(2)
		if isOperatorObject(v) {
			return g.scalar()
		}
		return v
	}
	ops := map[string]any{}
	for range 1 + g.r.IntN(2) {
		name := genOps[g.r.IntN(len(genOps))]
		switch name {
		case "$eq", "$neq":
			ops[name] = g.value(1)
		case "$in", "$nin":
			n := g.r.IntN(5)
			if g.r.IntN(3) == 0 { // long enough to be looked up in a set (itemSet)
				n = 8 + g.r.IntN(8)
			}
			items := make([]any, n)
			for i := range items {
				items[i] = g.value(1)
			}
			ops[name] = items
		case "$exists":
			ops[name] = g.r.IntN(2) == 0
		default:
			if g.r.IntN(2) == 0 {
				ops[name] = json.Number(g.pick(genNumbers))
			} else {
				ops[name] = g.pick(genStrings)
			}
		}
	}
	return ops
}

// operandFor is a random operator object holding name.
func (g gen) operandFor(name string) map[string]any {
	for {
		ops := g.cond()
		if m, ok := ops.(map[string]any); ok {
			if v, ok := m[name]; ok {
				return map[string]any{name: v}
			}
		}
	}
}
