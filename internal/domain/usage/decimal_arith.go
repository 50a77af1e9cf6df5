package usage

import (
	"math"
	"math/big"
)

// Arithmetic on Decimal: exact sums (with an int64 fast path) and comparison.

// Sign is -1, 0 or +1.
func (d *Decimal) Sign() int { return d.unscaled.Sign() }

// Add returns d + o exactly.
func (d *Decimal) Add(o *Decimal) Decimal {
	if r, ok := d.addSmall(o); ok {
		return r
	}
	return d.addBig(o)
}

func (d *Decimal) addBig(o *Decimal) Decimal {
	var r Decimal
	a, b := new(big.Int).Set(&d.unscaled), new(big.Int).Set(&o.unscaled)
	scale := d.scale
	switch {
	case d.scale < o.scale:
		a.Mul(a, pow10(o.scale-d.scale))
		scale = o.scale
	case d.scale > o.scale:
		b.Mul(b, pow10(d.scale-o.scale))
	}
	r.unscaled.Add(a, b)
	r.scale = scale
	r.normalize()
	return r
}

// addSmall is Add when both values and the sum fit in an int64 (no big.Int arithmetic);
// ok is false otherwise. The result is normalized as Add's.
func (d *Decimal) addSmall(o *Decimal) (Decimal, bool) {
	var r Decimal
	if !d.unscaled.IsInt64() || !o.unscaled.IsInt64() {
		return r, false
	}
	a, b, scale := d.unscaled.Int64(), o.unscaled.Int64(), max(d.scale, o.scale)
	var ok bool
	if a, ok = scaleUp(a, scale-d.scale); !ok {
		return r, false
	}
	if b, ok = scaleUp(b, scale-o.scale); !ok {
		return r, false
	}
	sum := a + b
	if (a > 0 && b > 0 && sum < 0) || (a < 0 && b < 0 && sum >= 0) {
		return r, false
	}
	for scale > 0 && sum%10 == 0 && sum != 0 {
		sum /= 10
		scale--
	}
	if sum == 0 {
		return r, true
	}
	r.unscaled.SetInt64(sum)
	r.scale = scale
	return r, true
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

// normalize drops trailing fractional zeros so equal values print alike.
func (d *Decimal) normalize() {
	if d.unscaled.Sign() == 0 {
		d.scale = 0
		return
	}
	ten := big.NewInt(10)
	var q, m big.Int
	for d.scale > 0 {
		q.QuoRem(&d.unscaled, ten, &m)
		if m.Sign() != 0 {
			return
		}
		d.unscaled.Set(&q)
		d.scale--
	}
}

// Cmp compares d and o: -1, 0 or +1.
func (d *Decimal) Cmp(o *Decimal) int {
	a, b := new(big.Int).Set(&d.unscaled), new(big.Int).Set(&o.unscaled)
	switch {
	case d.scale < o.scale:
		a.Mul(a, pow10(o.scale-d.scale))
	case d.scale > o.scale:
		b.Mul(b, pow10(d.scale-o.scale))
	}
	return a.Cmp(b)
}
