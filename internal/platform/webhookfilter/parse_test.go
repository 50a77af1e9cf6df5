package webhookfilter_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/webhookfilter"
)

// sized is {"a":"xx…"} of exactly n bytes.
func sized(n int) string { return `{"a":"` + strings.Repeat("x", n-8) + `"}` }

// nots is a filter nested depth objects deep: $not inside $not.
func nots(depth int) string {
	return strings.Repeat(`{"$not":`, depth-1) + `{}` + strings.Repeat(`}`, depth-1)
}

// arrays is {"a":{"$eq":[[…[1]…]]}} with n nested arrays (the filter and the operator
// object are levels 1 and 2).
func arrays(n int) string {
	return `{"a":{"$eq":` + strings.Repeat("[", n) + "1" + strings.Repeat("]", n) + `}}`
}

func inList(n int) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = "1"
	}
	return `{"a":{"$in":[` + strings.Join(vals, ",") + `]}}`
}

func TestParseAcceptsUpToTheLimits(t *testing.T) {
	for name, raw := range map[string]string{
		"exactly MaxBytes":             sized(webhookfilter.MaxBytes),
		"MaxDepth objects":             nots(webhookfilter.MaxDepth),
		"MaxDepth with arrays":         arrays(webhookfilter.MaxDepth - 2),
		"MaxItems in $in":              inList(webhookfilter.MaxItems),
		"number of 64 characters":      `{"a":1` + strings.Repeat("0", 63) + `}`,
		"exponent written 64 long":     `{"a":{"$gt":1e63}}`,
		"empty filter":                 `{}`,
		"empty $in":                    `{"a":{"$in":[]}}`,
		"$eq on an object with $ keys": `{"a":{"$eq":{"$b":1}}}`,
		"bare empty object":            `{"a":{}}`,
		"null, bool, array bare":       `{"a":null,"b":true,"c":[1,"x"]}`,
		"control character in a value": `{"a":"line\nbreak\t"}`,
		"surrogate pair":               `{"a":"\ud83d\ude00"}`,
		"every operator":               `{"a":{"$eq":1,"$neq":2,"$in":[1],"$nin":[2],"$gt":0,"$gte":"0","$lt":"z","$lte":2,"$exists":true}}`,
		"key with ~ and /":             `{"a/b~c":1}`,
		"whitespace around":            " \n{ \"a\" : 1 }\n ",
		"the 4 KiB deepest filter":     "", // bigFilter below
	} {
		t.Run(name, func(t *testing.T) {
			b := []byte(raw)
			if raw == "" {
				b = bigFilter(t)
			}
			if _, err := webhookfilter.Parse(b); err != nil {
				t.Fatalf("Parse(%.80s…) = %v, want a filter", b, err)
			}
		})
	}
}

func TestParseFaults(t *testing.T) {
	cases := []struct {
		name, raw, pointer, message string
	}{
		{"past MaxBytes", sized(webhookfilter.MaxBytes + 1), "filter", "longer than 4096 bytes"},
		{"past MaxDepth objects", nots(webhookfilter.MaxDepth + 1), "filter" + strings.Repeat("/$not", webhookfilter.MaxDepth), "more than 8 levels deep"},
		{"past MaxDepth arrays", arrays(webhookfilter.MaxDepth - 1), "filter/a/$eq/0/0/0/0/0/0", "more than 8 levels deep"},
		{"past MaxItems", inList(webhookfilter.MaxItems + 1), "filter/a/$in", "more than 100 items"},
		{"number past 64 characters", `{"a":{"$in":[1,1` + strings.Repeat("0", 64) + `]}}`, "filter/a/$in/1", "too long written out"},
		{"exponent past 64 characters", `{"a":{"$gt":1e64}}`, "filter/a/$gt", "too long written out"},
		{"huge exponent", `{"a":1e999999999999}`, "filter/a", "too long written out"},
		{"huge negative exponent in a value", `{"a":{"$eq":{"b":[-1e-99999]}}}`, "filter/a/$eq/b/0", "too long written out"},
		{"NUL in a value", `{"deal.status":{"$in":["a","b","c","\u0000"]}}`, "filter/deal.status/$in/3", "contains a NUL character"},
		{"NUL in a path", `{"a":{"b\u0000":1}}`, "filter/a", "has a key that contains a NUL character"},
		{"NUL in a top-level path", `{"a\u0000b":1}`, "filter", "has a key that contains a NUL character"},
		{"control character in a path", `{"a\nb":1}`, "filter", "has a path that contains a control character"},
		{"invalid UTF-8 in a value", "{\"a\":{\"$gt\":\"\xff\"}}", "filter/a/$gt", "is not valid UTF-8"},
		{"invalid UTF-8 in a key", "{\"a\xc3\":1}", "filter", "has a key that is not valid UTF-8"},
		{"half a surrogate pair", `{"a":"\ud800"}`, "filter/a", "is not valid UTF-8"},
		{"invalid UTF-8 outside strings", "{\xff}", "filter", "is not valid JSON"},
		{"duplicate path", `{"a":1,"a":2}`, "filter/a", "given twice"},
		{"duplicate past eight keys", `{"a0":1,"a1":1,"a2":1,"a3":1,"a4":1,"a5":1,"a6":1,"a7":1,"a8":1,"a9":1,"a3":2}`, "filter/a3", "given twice"},
		{"duplicate operator", `{"a":{"$gt":1,"$gt":2}}`, "filter/a/$gt", "given twice"},
		{"duplicate key in a value", `{"a":{"$eq":{"x":1,"x":1}}}`, "filter/a/$eq/x", "given twice"},
		{"duplicate $and", `{"$and":[{}],"$and":[{}]}`, "filter/$and", "given twice"},
		{"unknown filter operator", `{"$nor":[{}]}`, "filter/$nor", "is not an operator"},
		{"comparison without a path", `{"$eq":1}`, "filter/$eq", "needs a path"},
		{"unknown comparison", `{"a":{"$regex":"x"}}`, "filter/a/$regex", "is not a comparison operator"},
		{"$not on a path", `{"a":{"$not":{"$eq":1}}}`, "filter/a/$not", "is not a comparison operator"},
		{"operators then a field", `{"a":{"$eq":1,"b":2}}`, "filter/a/b", "mixes a field with operators"},
		{"a field then an operator", `{"a":{"b":2,"$eq":1}}`, "filter/a/$eq", "mixes an operator with fields"},
		{"empty $and", `{"$and":[]}`, "filter/$and", "non-empty array of filters"},
		{"$or not an array", `{"$or":{"a":1}}`, "filter/$or", "non-empty array of filters"},
		{"$and item not a filter", `{"$and":[{"a":1},2]}`, "filter/$and/1", "must be an object"},
		{"$not not a filter", `{"$not":[{"a":1}]}`, "filter/$not", "must be an object"},
		{"$in not an array", `{"a":{"$in":"x"}}`, "filter/a/$in", "must be an array"},
		{"$exists not a boolean", `{"a":{"$exists":1}}`, "filter/a/$exists", "true or false"},
		{"range on null", `{"a":{"$lt":null}}`, "filter/a/$lt", "a number or a string"},
		{"range on an array", `{"a":{"$gte":[1]}}`, "filter/a/$gte", "a number or a string"},
		{"empty path", `{"":1}`, "filter/", "is not a path"},
		{"empty segment", `{"deal..status":1}`, "filter/deal..status", "is not a path"},
		{"trailing dot", `{"deal.":1}`, "filter/deal.", "is not a path"},
		{"pointer escapes ~ and /", `{"x":{"$eq":{"a/b~c":1,"a/b~c":2}}}`, "filter/x/$eq/a~1b~0c", "given twice"},
		{"pointer escapes in a path", `{"a/b~c":{"$gt":true}}`, "filter/a~1b~0c/$gt", "a number or a string"},
		{"not an object", `["a"]`, "filter", "must be an object"},
		{"null", `null`, "filter", "must be an object"},
		{"not JSON", `{"a":`, "filter/a", "is not valid JSON"},
		{"raw NUL", "{\"a\":\"\x00\"}", "filter/a", "is not valid JSON"},
		{"data after the filter", `{} {}`, "filter", "data after"},
		{"empty", ``, "filter", "is not valid JSON"},
		{"bad escape", `{"a":"\x"}`, "filter/a", "is not valid JSON"},
		{"short \\u escape", `{"a":"\u12"}`, "filter/a", "is not valid JSON"},
		{"leading zero", `{"a":01}`, "filter/a", "is not valid JSON"},
		{"bad literal", `{"a":nul}`, "filter/a", "is not valid JSON"},
		{"missing comma", `{"a":1 "b":2}`, "filter", "is not valid JSON"},
		{"trailing comma", `{"a":[1,]}`, "filter/a/1", "is not valid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := webhookfilter.Parse([]byte(c.raw))
			var fault *webhookfilter.Fault
			if !errors.As(err, &fault) {
				t.Fatalf("Parse = %v, %v; want a *Fault", f, err)
			}
			if fault.Pointer != c.pointer || !strings.Contains(fault.Message, c.message) {
				t.Fatalf("fault %q %q, want %q …%s…", fault.Pointer, fault.Message, c.pointer, c.message)
			}
		})
	}
}

// TestBigFilterIsAtTheLimits: the benchmark's filter is what the test says it is — within
// a few bytes of MaxBytes, MaxDepth deep (one more level is refused) — and it matches the
// deal.
func TestBigFilterIsAtTheLimits(t *testing.T) {
	raw := bigFilter(t)
	if len(raw) > webhookfilter.MaxBytes || len(raw) < webhookfilter.MaxBytes-64 {
		t.Fatalf("bigFilter is %d bytes", len(raw))
	}
	f, err := webhookfilter.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := f.Match([]byte(dealBody)); err != nil || !ok {
		t.Fatalf("Match = %v, %v; want true", ok, err)
	}
	// One more level: the deepest $in items wrapped in an array.
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	in := v.(map[string]any)["$or"].([]any)[0].(map[string]any)["$and"].([]any)[0].(map[string]any)["$not"].(map[string]any)["deal.customer.external_id"].(map[string]any)
	in["$in"] = []any{[]any{"x"}}
	deeper, _ := json.Marshal(v)
	_, err = webhookfilter.Parse(deeper)
	var fault *webhookfilter.Fault
	if !errors.As(err, &fault) || fault.Pointer != "filter/$or/0/$and/0/$not/deal.customer.external_id/$in/0" {
		t.Fatalf("one level deeper: %v", err)
	}
	t.Logf("%d bytes, %d steps", len(raw), f.Steps())
}

func TestNilFilterMatches(t *testing.T) {
	var f *webhookfilter.Filter
	if ok, err := f.Match([]byte(dealBody)); err != nil || !ok {
		t.Fatalf("nil filter: %v, %v", ok, err)
	}
}

func TestMatchRefusesPayloadsThatAreNotJSON(t *testing.T) {
	f, err := webhookfilter.Parse([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{``, `{`, `{} x`, `{"a":}`} {
		if _, err := f.Match([]byte(p)); err == nil {
			t.Errorf("Match(%q) succeeded", p)
		}
	}
}

// TestEscapesDecode: a filter's escapes mean what JSON says, checked on the payload the
// same text makes through encoding/json.
func TestEscapesDecode(t *testing.T) {
	text := "é\"\\/\b\f\n\r\t😀\u2028<>&"
	payload, err := json.Marshal(map[string]any{"k\"\\/~": text})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]bool{
		`{"k\"\\\/~":"\u00e9\"\\\/\b\f\n\r\t\ud83d\ude00\u2028\u003c\u003E\u0026"}`: true,
		`{"k\"\\\/~":"\u00e9\"\\\/\b\f\n\r\t\ud83d\ude01\u2028\u003c\u003E\u0026"}`: false,
	} {
		f, err := webhookfilter.Parse([]byte(raw))
		if err != nil {
			t.Fatalf("Parse(%s): %v", raw, err)
		}
		if got, err := f.Match(payload); err != nil || got != want {
			t.Errorf("%s on %s = %v, %v; want %v", raw, payload, got, err, want)
		}
	}
}
