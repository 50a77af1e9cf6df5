package decimal

import (
	"strings"
	"testing"
)

// bigString is the canonical text written the way the first Decimal wrote it, from the
// coefficient and scale by math/big: the reference String is checked against.
func (d *Decimal) bigString() string {
	s := d.Unscaled().String()
	scale := d.Scale()
	if scale == 0 {
		return s
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if pad := int(scale) + 1 - len(s); pad > 0 {
		s = strings.Repeat("0", pad) + s
	}
	cut := len(s) - int(scale)
	s = s[:cut] + "." + s[cut:]
	if neg {
		s = "-" + s
	}
	return s
}

func TestDecimal(t *testing.T) {
	tests := []struct{ a, b, sum string }{
		{"0.1", "0.2", "0.3"},
		{"1.50", "-1.5", "0"},
		{"-0", "0.000", "0"},
		{"1e2", "0.01", "100.01"},
		{"-12.345", "2.345", "-10"},
		{"99999999999999999999999999999999.9", "0.1", "100000000000000000000000000000000"},
	}
	for _, tt := range tests {
		a, err1 := Parse(tt.a)
		b, err2 := Parse(tt.b)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := a.Add(&b); got.String() != tt.sum {
			t.Errorf("%s + %s = %s, want %s", tt.a, tt.b, got.String(), tt.sum)
		}
	}
	for in, want := range map[string]string{"10.500": "10.5", "-0.0": "0", "7": "7", "abc": "abc", "1.0e+20": "100000000000000000000"} {
		if got := Canonical(in); got != want {
			t.Errorf("Canonical(%s) = %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{"01", "1.", ".5", "+1", "1e", "NaN", "Infinity", "-", "0x10", " 1"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// TestDecimalStringMatchesReference covers the int64 fast path of String at its edges.
func TestDecimalStringMatchesReference(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "0.5", "-0.005", "12.5", "9223372036854775807", "-9223372036854775808",
		"922337203685477580.7", "-0.000000000000000001", "1e-30", "12345678901234567890.5", "1e300"} {
		d, err := parseLong(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		for _, x := range []Decimal{d, d.Add(&d)} {
			if got, want := x.String(), x.bigString(); got != want {
				t.Errorf("%s: String %q, want %q", s, got, want)
			}
		}
	}
}

// TestAddSmallMatchesBig: the int64 fast path of Add gives what big.Int arithmetic gives.
func TestAddSmallMatchesBig(t *testing.T) {
	vals := []string{"0", "1", "-1", "0.5", "-0.5", "10.5", "20.5", "-31", "0.001", "123456789.123456789",
		"9223372036854775807", "-9223372036854775808", "922337203685477580.7", "-0.000000000000000001", "1e20"}
	for _, x := range vals {
		for _, y := range vals {
			a, _ := parseLong(x)
			b, _ := parseLong(y)
			got, ok := a.addSmall(&b)
			want := a.addBig(&b)
			if ok && (got.Unscaled().Cmp(want.Unscaled()) != 0 || got.Scale() != want.Scale()) {
				t.Errorf("%s + %s = %s (scale %d), want %s (scale %d)", x, y, got.String(), got.Scale(), want.String(), want.Scale())
			}
			if sum := a.Add(&b); sum.String() != want.bigString() {
				t.Errorf("%s + %s: Add %s, want %s", x, y, sum.String(), want.bigString())
			}
		}
	}
}
