package decimal

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Arithmetic on Decimal: exact sums, with an int64 fast path. A sum is worked out on the
// coefficient and scale of its operands (value = coefficient × 10^-scale, scale ≥ 0) and
// written back as digits.

// Add returns d + o exactly.
func (d *Decimal) Add(o *Decimal) Decimal {
	if r, ok := d.addSmall(o); ok {
		return r
	}
	return d.addBig(o)
}

// Scale is the number of digits after the point of d's canonical text (String), 0 for an
// integer.
func (d *Decimal) Scale() int32 { return int32(max(0, int64(d.Digits())-d.exp)) }

// Unscaled is d × 10^Scale: the integer whose digits String writes.
func (d *Decimal) Unscaled() *big.Int {
	u := new(big.Int)
	if d.Digits() == 0 {
		return u
	}
	u.SetString(d.hi+d.lo, 10)
	if zeros := d.exp - int64(d.Digits()); zeros > 0 {
		u.Mul(u, pow10(int32(zeros)))
	}
	if d.neg {
		u.Neg(u)
	}
	return u
}

func (d *Decimal) addBig(o *Decimal) Decimal {
	a, b := d.Unscaled(), o.Unscaled()
	ds, os := d.Scale(), o.Scale()
	scale := ds
	switch {
	case ds < os:
		a.Mul(a, pow10(os-ds))
		scale = os
	case ds > os:
		b.Mul(b, pow10(ds-os))
	}
	return fromText(a.Add(a, b).String(), scale)
}

// small is d's coefficient and scale when the coefficient fits in an int64.
func (d *Decimal) small() (int64, int32, bool) {
	n := d.Digits()
	if n > 18 || d.exp-int64(n) > 18 {
		return 0, 0, false
	}
	var v int64
	for _, run := range [2]string{d.hi, d.lo} {
		for i := 0; i < len(run); i++ {
			v = v*10 + int64(run[i]-'0')
		}
	}
	v, ok := scaleUp(v, int32(max(0, d.exp-int64(n))))
	if d.neg {
		v = -v
	}
	return v, d.Scale(), ok
}

// addSmall is Add when both values and the sum fit in an int64 (no big.Int arithmetic);
// ok is false otherwise. The result is Add's.
func (d *Decimal) addSmall(o *Decimal) (Decimal, bool) {
	a, as, ok := d.small()
	if !ok {
		return Decimal{}, false
	}
	b, bs, ok := o.small()
	if !ok {
		return Decimal{}, false
	}
	scale := max(as, bs)
	if a, ok = scaleUp(a, scale-as); !ok {
		return Decimal{}, false
	}
	if b, ok = scaleUp(b, scale-bs); !ok {
		return Decimal{}, false
	}
	sum := a + b
	if (a > 0 && b > 0 && sum < 0) || (a < 0 && b < 0 && sum >= 0) {
		return Decimal{}, false
	}
	if sum == 0 {
		return Decimal{}, true
	}
	var buf [24]byte
	return fromText(string(strconv.AppendInt(buf[:0], sum, 10)), scale), true
}

// scaleUp is v × 10^n, ok false when it overflows an int64.
func scaleUp(v int64, n int32) (int64, bool) {
	for ; n > 0; n-- {
		if v > math.MaxInt64/10 || v < math.MinInt64/10 {
			return 0, false
		}
		v *= 10
	}
	return v, true
}

func pow10(n int32) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// fromText is the decimal coefficient × 10^-scale, the coefficient written in base 10
// (a sign, then digits).
func fromText(coef string, scale int32) Decimal {
	neg := strings.HasPrefix(coef, "-")
	digits := strings.TrimLeft(strings.TrimPrefix(coef, "-"), "0")
	if digits == "" {
		return Decimal{}
	}
	exp := int64(len(digits)) - int64(scale)
	return Decimal{neg: neg, hi: strings.TrimRight(digits, "0"), exp: exp}
}
