package webhookfilter_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/revops/revops/internal/platform/webhookfilter"
)

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
		var generic any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&generic); err != nil {
			t.Fatal(err)
		}
		// One payload decoded once for several filters, as the fan-out does.
		raws := make([][]byte, filtersEach)
		fs := make([]*webhookfilter.Filter, filtersEach)
		for i := range fs {
			raws[i] = mustJSON(t, g.filter(1))
			f, err := webhookfilter.Parse(raws[i])
			if err != nil {
				t.Fatalf("Parse(%s): %v", raws[i], err)
			}
			fs[i] = f
		}
		doc, err := webhookfilter.NewReader(fs...).Decode(body)
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range fs {
			raw := raws[i]
			// The reference reads the filter as sent, numbers as literals.
			var fm map[string]any
			fdec := json.NewDecoder(bytes.NewReader(raw))
			fdec.UseNumber()
			if err := fdec.Decode(&fm); err != nil {
				t.Fatal(err)
			}
			want := refMatch(fm, generic)
			checkEval(t, f, doc, want, raw, body)
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
				items := []any{g.scalar(), own}
				for g.r.IntN(2) == 0 && len(items) < 12 { // long lists are looked up in a set
					items = append(items, g.value(1))
				}
				fv = map[string]any{path: map[string]any{name: items}}
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
			doc, err := webhookfilter.NewReader(f).Decode(body)
			if err != nil {
				t.Fatal(err)
			}
			checkEval(t, f, doc, want, raw, body)
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

// checkEval: the evaluator's answer is the reference's, and it took at most the steps
// Parse counted for the filter (the static bound holds at run time).
func checkEval(t *testing.T, f *webhookfilter.Filter, doc webhookfilter.Doc, want bool, raw, body []byte) {
	t.Helper()
	got, steps, err := f.Eval(doc)
	if err != nil || got != want {
		t.Fatalf("filter %s\npayload %s\nmatch = %v, %v; the reference says %v", raw, body, got, err, want)
	}
	if steps > f.Steps() {
		t.Fatalf("filter %s\npayload %s\ntook %d steps, Parse counted %d", raw, body, steps, f.Steps())
	}
}
