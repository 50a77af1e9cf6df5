package webhookfilter_test

import (
	"bytes"
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/webhookfilter"
)

// The reference evaluator: CONTRACT §25 read as naively as possible, on generic values
// from encoding/json, with big.Rat for decimals and runes for code points. It shares no
// code with the package.

func refMatch(filter map[string]any, doc any) bool {
	for key, cond := range filter {
		var ok bool
		switch key {
		case "$and":
			ok = true
			for _, f := range cond.([]any) {
				ok = ok && refMatch(f.(map[string]any), doc)
			}
		case "$or":
			for _, f := range cond.([]any) {
				ok = ok || refMatch(f.(map[string]any), doc)
			}
		case "$not":
			ok = !refMatch(cond.(map[string]any), doc)
		default:
			ok = refCond(refLookup(doc, key), cond)
		}
		if !ok {
			return false
		}
	}
	return true
}

// refFound is a looked-up value; missing when the path is not there.
type refFound struct {
	v       any
	missing bool
}

func refLookup(doc any, path string) refFound {
	cur := doc
	for _, seg := range strings.Split(path, ".") {
		obj, isObj := cur.(map[string]any)
		if !isObj {
			return refFound{missing: true}
		}
		next, has := obj[seg]
		if !has {
			return refFound{missing: true}
		}
		cur = next
	}
	return refFound{v: cur}
}

func isOperatorObject(cond any) bool {
	obj, ok := cond.(map[string]any)
	if !ok || len(obj) == 0 {
		return false
	}
	for k := range obj {
		if !strings.HasPrefix(k, "$") {
			return false
		}
	}
	return true
}

func refCond(x refFound, cond any) bool {
	if !isOperatorObject(cond) {
		return !x.missing && refEqual(cond, x.v)
	}
	for name, operand := range cond.(map[string]any) {
		if !refOp(x, name, operand) {
			return false
		}
	}
	return true
}

func refOp(x refFound, name string, operand any) bool {
	switch name {
	case "$exists":
		return operand.(bool) == !x.missing
	case "$eq":
		return !x.missing && refEqual(operand, x.v)
	case "$neq":
		return x.missing || !refEqual(operand, x.v)
	case "$in", "$nin":
		in := false
		for _, item := range operand.([]any) {
			if !x.missing && refEqual(item, x.v) {
				in = true
			}
		}
		if name == "$in" {
			return in
		}
		return !in
	}
	if x.missing {
		return false
	}
	c, comparable := refOrder(x.v, operand)
	if !comparable {
		return false
	}
	switch name {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	case "$lte":
		return c <= 0
	}
	panic("unknown operator " + name)
}

func refRat(lit string) *big.Rat {
	r, ok := new(big.Rat).SetString(lit)
	if !ok {
		panic("not a number: " + lit)
	}
	return r
}

func refEqual(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case json.Number:
		bn, ok := b.(json.Number)
		return ok && refRat(string(a)).Cmp(refRat(string(bn))) == 0
	case []any:
		ba, ok := b.([]any)
		if !ok || len(a) != len(ba) {
			return false
		}
		for i := range a {
			if !refEqual(a[i], ba[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, has := bm[k]
			if !has || !refEqual(av, bv) {
				return false
			}
		}
		return true
	}
	panic("unexpected JSON value")
}

var refDecimalString = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// refAsDecimal: a number, or a string spelling a decimal.
func refAsDecimal(v any) (*big.Rat, bool) {
	switch v := v.(type) {
	case json.Number:
		return refRat(string(v)), true
	case string:
		if refDecimalString.MatchString(v) {
			return refRat(v), true
		}
	}
	return nil, false
}

func refOrder(v, operand any) (int, bool) {
	if x, ok := refAsDecimal(v); ok {
		if y, ok := refAsDecimal(operand); ok {
			return x.Cmp(y), true
		}
	}
	vs, ok1 := v.(string)
	os, ok2 := operand.(string)
	if !ok1 || !ok2 {
		return 0, false
	}
	a, b := []rune(vs), []rune(os)
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1, true
			}
			return 1, true
		}
	}
	switch {
	case len(a) < len(b):
		return -1, true
	case len(a) > len(b):
		return 1, true
	}
	return 0, true
}

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
			items := make([]any, g.r.IntN(5))
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

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(buf.Bytes())
}

// TestMatchesReference: the evaluator agrees with the reference on thousands of random
// payloads and filters, and both answers come up often enough to mean something.
func TestMatchesReference(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(34, 25))}
	const payloads, filtersEach = 2500, 4
	matched := 0
	for range payloads {
		body := mustJSON(t, g.payload())
		doc, err := webhookfilter.Decode(body)
		if err != nil {
			t.Fatal(err)
		}
		var generic any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&generic); err != nil {
			t.Fatal(err)
		}
		for range filtersEach {
			fv := g.filter(1)
			raw := mustJSON(t, fv)
			f, err := webhookfilter.Parse(raw)
			if err != nil {
				t.Fatalf("Parse(%s): %v", raw, err)
			}
			// The reference reads the filter as sent, numbers as literals.
			var fm map[string]any
			fdec := json.NewDecoder(bytes.NewReader(raw))
			fdec.UseNumber()
			if err := fdec.Decode(&fm); err != nil {
				t.Fatal(err)
			}
			want := refMatch(fm, generic)
			if got := f.MatchDoc(doc); got != want {
				t.Fatalf("filter %s\npayload %s\nmatch = %v, the reference says %v", raw, body, got, want)
			}
			if got, err := f.Match(body); err != nil || got != want {
				t.Fatalf("Match(%s) on %s = %v, %v; MatchDoc said %v", raw, body, got, err, want)
			}
			if want {
				matched++
			}
		}
	}
	total := payloads * filtersEach
	if matched < total/10 || matched > total*9/10 {
		t.Fatalf("%d of %d cases matched: the generator no longer tests both answers", matched, total)
	}
	t.Logf("%d cases, %d matched", total, matched)
}

// paths lists every dotted path of doc that resolves, with its value.
func paths(prefix string, doc any, out map[string]any) {
	obj, ok := doc.(map[string]any)
	if !ok {
		return
	}
	for k, v := range obj {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		out[p] = v
		paths(p, v, out)
	}
}

// TestOperatorsMatchReference: every operator alone, on paths that resolve (operands
// often taken from the payload itself, so that equality and order ties happen) and on
// paths that do not; each operator must have answered both true and false.
func TestOperatorsMatchReference(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(25, 34))}
	outcomes := map[string][2]int{}
	for range 3000 {
		payload := g.payload()
		body := mustJSON(t, payload)
		doc, err := webhookfilter.Decode(body)
		if err != nil {
			t.Fatal(err)
		}
		var generic any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&generic); err != nil {
			t.Fatal(err)
		}
		found := map[string]any{}
		paths("", generic, found)
		var candidates []string
		for p := range found {
			candidates = append(candidates, p)
		}
		slices.Sort(candidates) // map order is random; the seed must decide
		for _, name := range genOps {
			path := g.path()
			if len(candidates) > 0 && g.r.IntN(4) != 0 {
				path = candidates[g.r.IntN(len(candidates))]
			}
			var fv map[string]any
			own, has := found[path]
			useOwn := has && g.r.IntN(2) == 0
			isRange := name == "$gt" || name == "$gte" || name == "$lt" || name == "$lte"
			switch {
			case name == "$exists":
				fv = map[string]any{path: map[string]any{name: g.r.IntN(2) == 0}}
			case useOwn && (name == "$in" || name == "$nin"):
				fv = map[string]any{path: map[string]any{name: []any{g.scalar(), own}}}
			case useOwn && !isRange:
				fv = map[string]any{path: map[string]any{name: own}}
			case useOwn:
				switch own.(type) {
				case string, json.Number: // a range operand as it is
				default:
					own = g.pick(genStrings)
				}
				fv = map[string]any{path: map[string]any{name: own}}
			default:
				fv = map[string]any{path: g.operandFor(name)}
			}
			raw := mustJSON(t, fv)
			f, err := webhookfilter.Parse(raw)
			if err != nil {
				t.Fatalf("Parse(%s): %v", raw, err)
			}
			var fm map[string]any
			fdec := json.NewDecoder(bytes.NewReader(raw))
			fdec.UseNumber()
			if err := fdec.Decode(&fm); err != nil {
				t.Fatal(err)
			}
			want := refMatch(fm, generic)
			if got := f.MatchDoc(doc); got != want {
				t.Fatalf("filter %s\npayload %s\nmatch = %v, the reference says %v", raw, body, got, want)
			}
			o := outcomes[name]
			if want {
				o[1]++
			} else {
				o[0]++
			}
			outcomes[name] = o
		}
	}
	for _, name := range genOps {
		if o := outcomes[name]; o[0] < 100 || o[1] < 100 {
			t.Errorf("%s answered false %d and true %d times: too few of one to test it", name, o[0], o[1])
		}
	}
	t.Logf("outcomes (false, true) per operator: %v", outcomes)
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
