package decimal

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCmpDecimal: the order of exact decimals agrees with math/big on numbers and decimal
// strings whose digits fall either side of the point in every way (the comparison walks
// the digits before and after the point as runs).
func TestCmpDecimal(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 41))
	digits := func() string {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString([]string{"0", "1", "9", "10", "01", "123"}[r.IntN(6)])
		}
		if b.Len() == 0 {
			return "0"
		}
		return b.String()
	}
	text := func() string {
		s := digits()
		if r.IntN(2) == 0 {
			s += "." + digits()
		}
		if r.IntN(3) == 0 {
			s = "-" + s
		}
		return s
	}
	for range 20_000 {
		a, b := text(), text()
		x, okx := ParseString(a)
		y, oky := ParseString(b)
		if !okx || !oky {
			t.Fatalf("%s or %s is not a decimal string", a, b)
		}
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		if got, want := x.Cmp(&y), ra.Cmp(rb); got != want {
			t.Fatalf("cmp(%s, %s) = %d, want %d", a, b, got, want)
		}
	}
}
