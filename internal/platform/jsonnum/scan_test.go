package jsonnum

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFirstFault: the first number past §15's bounds in document order, named by its path
// in the API's param style; strings that look like numbers or brackets are not numbers.
func TestFirstFault(t *testing.T) {
	long := "1" + strings.Repeat("7", 899_999)
	for _, c := range []struct {
		doc   string
		param string // "" when no number is at fault
		len   int
	}{
		{`{}`, "", 0},
		{`{"a":1,"b":[-1.5e3,0,1e63],"c":"1e999","d":{"e":true,"f":null}}`, "", 0},
		{`{"s":"[1e999,{\"","t":"\\","n":12}`, "", 0},
		{`1e64`, "payload", 65},
		{`{"a":{"b":[1,2,1e999]}}`, "payload.a.b[2]", 1000},
		{`[0,[1,{"x":-1e-99999}]]`, "payload[1][1].x", 100002},
		{`{"a":[],"b":{},"c":[{}, {"d" : ` + long + ` }]}`, "payload.c[1].d", len(long)},
		{`{"x\"y.z":1e99,"later":1e999}`, `payload.x"y.z`, 100},
		{`{"a":1,"b":1E+9999999}`, "payload.b", 0},
		{"{\"\\u00e9\":[\n1 ,\t1e65 ]}", "payload.é[1]", 66},
	} {
		if !json.Valid([]byte(c.doc)) {
			t.Fatalf("%.40s is not JSON", c.doc)
		}
		f := FirstFault([]byte(c.doc))
		switch {
		case c.param == "" && f != nil:
			t.Errorf("%.60s: fault at %s", c.doc, f.Param("payload"))
		case c.param == "":
		case f == nil:
			t.Errorf("%.60s: no fault, want one at %s", c.doc, c.param)
		case f.Param("payload") != c.param || f.Len != c.len || f.Err != ErrTooLong:
			t.Errorf("%.60s: fault at %s of length %d (%v), want %s of %d", c.doc, f.Param("payload"), f.Len, f.Err, c.param, c.len)
		}
	}
}
