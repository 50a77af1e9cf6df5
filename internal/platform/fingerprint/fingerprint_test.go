package fingerprint

import (
	"strings"
	"testing"
)

func TestSameValueSameFingerprint(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{`{"a":1,"b":"x"}`, `{ "b" : "x", "a" : 1 }`},
		{`{"n":1}`, `{"n":1.0}`},
		{`{"n":1}`, `{"n":1e0}`},
		{`{"n":150}`, `{"n":1.5E2}`},
		{`{"n":0.001}`, `{"n":1e-3}`},
		{`{"n":0}`, `{"n":-0.0e7}`},
		{`{"s":"é<"}`, `{"s":"\u00e9\u003c"}`},
		{`{"a":{"y":[1,2],"x":null}}`, `{"a":{"x":null,"y":[1.0,2e0]}}`},
		{`{"a":1,"a":2}`, `{"a":2}`},
	} {
		if Of([]byte(tc.a)) != Of([]byte(tc.b)) {
			t.Errorf("%s and %s differ", tc.a, tc.b)
		}
	}
}

func TestDifferentValueDifferentFingerprint(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{`{"n":1}`, `{"n":2}`},
		{`{"n":1}`, `{"n":"1"}`},
		{`{"n":10}`, `{"n":1}`},
		{`{"n":1e5}`, `{"n":1e-5}`},
		{`{"n":-1}`, `{"n":1}`},
		{`[1,2]`, `[2,1]`},
		{`{}`, ``},
		{`{"a":1}`, `{"a":1} x`},
		{`not json`, `not  json`},
		{`{"a":null}`, `{}`},
	} {
		if Of([]byte(tc.a)) == Of([]byte(tc.b)) {
			t.Errorf("%q and %q are equal", tc.a, tc.b)
		}
	}
}

// Hostile exponents must not expand: the canonical text stays short.
func TestNumberNeverExpands(t *testing.T) {
	for _, lit := range []string{"1e-99999", "1e131000", "9.99e999999999999999999999", "-5E+1000000"} {
		got := Number(lit)
		if len(got) > len(lit)+4 {
			t.Errorf("Number(%s) = %d characters", lit, len(got))
		}
	}
	if got := Number("1e-99999"); got != "1e-99999" {
		t.Errorf("Number(1e-99999) = %s", got)
	}
	if got := Number(strings.Repeat("1", 10) + "00.00"); got != "1111111111e2" {
		t.Errorf("got %s", got)
	}
}

// A number whose exponent has a million digits costs no big-number arithmetic, and still
// equals only itself.
func TestHugeExponentIsCheap(t *testing.T) {
	huge := "1e" + strings.Repeat("9", 1<<20)
	body := []byte(`{"n":` + huge + `}`)
	if Of(body) != Of([]byte(`{ "n" : `+huge+` }`)) || Of(body) == Of([]byte(`{"n":1e`+strings.Repeat("9", 1<<20-1)+`8}`)) {
		t.Fatal("huge exponents compared wrongly")
	}
	if got := Number("1e+05"); got != "1e5" {
		t.Errorf("Number(1e+05) = %s", got)
	}
	if got := Number("12.50e-3"); got != "125e-4" {
		t.Errorf("Number(12.50e-3) = %s", got)
	}
}
