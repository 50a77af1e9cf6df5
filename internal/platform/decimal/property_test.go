package decimal

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomLiteral is a JSON number literal of up to about 40 digits, with or without a
// fraction and an exponent, zeros where they make edges (leading, trailing, inside).
func randomLiteral(r *rand.Rand) string {
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte("0000123456789"[r.IntN(13)])
		}
		return b.String()
	}
	var b strings.Builder
	if r.IntN(3) == 0 {
		b.WriteByte('-')
	}
	if r.IntN(4) == 0 {
		b.WriteByte('0')
	} else {
		b.WriteByte("123456789"[r.IntN(9)])
		b.WriteString(digits(r.IntN(20)))
	}
	if r.IntN(2) == 0 {
		b.WriteString("." + digits(1+r.IntN(20)))
	}
	if r.IntN(4) == 0 {
		b.WriteString([]string{"e", "E", "e+", "e-"}[r.IntN(4)])
		b.WriteString(digits(1 + r.IntN(3)))
	}
	return b.String()
}

// TestParseMatchesReference: Parse (its short path included) and ParseStored read every
// literal as math/big does, or refuse it; String writes the value exactly, Cmp orders and
// Add sums as big.Rat does.
func TestParseMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 5))
	var prev Decimal
	prevRat := new(big.Rat)
	for range 50_000 {
		s := randomLiteral(r)
		d, err := Parse(s)
		long, lerr := parseLong(s)
		if (err == nil) != (lerr == nil) || (err == nil && (d.Cmp(&long) != 0 || d.String() != long.String())) {
			t.Fatalf("Parse(%s) = %v, %v; parseLong %v, %v", s, d.String(), err, long.String(), lerr)
		}
		if err != nil {
			continue
		}
		want, _ := new(big.Rat).SetString(s)
		got, ok := new(big.Rat).SetString(d.String())
		if !ok || got.Cmp(want) != 0 || d.String() != d.bigString() {
			t.Fatalf("Parse(%s).String() = %s (reference %s)", s, d.String(), d.bigString())
		}
		if c := d.Cmp(&prev); c != want.Cmp(prevRat) {
			t.Fatalf("Cmp(%s, %s) = %d", s, prev.String(), c)
		}
		sum := d.Add(&prev)
		if wantSum := new(big.Rat).Add(want, prevRat); sum.String() != ratText(wantSum, d.Scale(), prev.Scale()) {
			t.Fatalf("%s + %s = %s, want %s", s, prev.String(), sum.String(), wantSum.FloatString(int(max(d.Scale(), prev.Scale()))))
		}
		if sum.TextLen() != len(sum.String()) {
			t.Fatalf("TextLen(%s) = %d", sum.String(), sum.TextLen())
		}
		prev, prevRat = d, want
	}
}

// ratText is x's canonical text: at most max(scales) decimals, trailing zeros dropped.
func ratText(x *big.Rat, a, b int32) string {
	s := x.FloatString(int(max(a, b)))
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}
