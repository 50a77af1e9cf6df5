// Package decimal is Revops's one exact decimal number: read from a JSON number or a
// decimal string without building anything, ordered, added exactly, and written in one
// canonical form. Usage metric values, meter figures and alert thresholds (CONTRACT §5,
// §18, §24) are added and compared as decimals; an endpoint filter (§25) compares a
// payload's numbers and decimal strings as decimals. Each reader keeps its own bounds:
// Parse and ParseStored those of usage (at most MaxSignificantDigits digits, finite),
// ParseNumber and ParseString none (a payload may hold 1e999999999999: its exponent
// saturates, which orders it the same against every bounded operand).
package decimal

import (
	"strconv"
	"strings"
)

// Decimal is an exact decimal number. Its significant digits are hi followed by lo
// (substrings of the text it was read from, the point between them dropped; a sum's in
// hi alone), with no leading or trailing zero, and its value is ±0.(hi lo) × 10^exp.
// Zero has no digits and is never negative. The zero value is 0. A Decimal is never
// changed in place: copies share its digits safely.
type Decimal struct {
	neg    bool
	hi, lo string
	exp    int64
}

// expCap saturates exponents: a payload may hold 1e999999999999, but every filter operand
// is bounded by jsonnum (at most 64 characters written out), so any exponent beyond the
// cap compares the same as the true one against every operand.
const expCap = 1 << 40

// Digits is the number of significant digits (0 for zero).
func (d *Decimal) Digits() int { return len(d.hi) + len(d.lo) }

// Sign is -1, 0 or +1.
func (d *Decimal) Sign() int {
	switch {
	case d.Digits() == 0:
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// Cmp orders d and o: -1, 0 or +1.
func (d *Decimal) Cmp(o *Decimal) int {
	sx, sy := d.Sign(), o.Sign()
	if sx != sy {
		if sx < sy {
			return -1
		}
		return 1
	}
	if sx == 0 {
		return 0
	}
	m := cmpMagnitude(d, o)
	if sx < 0 {
		return -m
	}
	return m
}

func cmpMagnitude(x, y *Decimal) int {
	if x.exp != y.exp {
		if x.exp < y.exp {
			return -1
		}
		return 1
	}
	// The digits, compared a run at a time (hi then lo of each: runs of bytes, compared
	// as memory).
	xs, ys := [2]string{x.hi, x.lo}, [2]string{y.hi, y.lo}
	var xi, yi int
	a, b := xs[0], ys[0]
	for {
		for a == "" && xi == 0 {
			xi, a = 1, xs[1]
		}
		for b == "" && yi == 0 {
			yi, b = 1, ys[1]
		}
		if a == "" || b == "" {
			break
		}
		n := min(len(a), len(b))
		if c := strings.Compare(a[:n], b[:n]); c != 0 {
			return c
		}
		a, b = a[n:], b[n:]
	}
	// Same prefix: the longer one has a non-zero digit further on.
	switch nx, ny := x.Digits(), y.Digits(); {
	case nx < ny:
		return -1
	case nx > ny:
		return 1
	}
	return 0
}

// ParseNumber reads a JSON number literal (as encoding/json has checked it), of any
// length: past expCap its exponent saturates.
func ParseNumber(s string) (Decimal, bool) { return scan(s, true) }

// ParseString reads a decimal string: -?[0-9]+(\.[0-9]+)?, of any length.
func ParseString(s string) (Decimal, bool) { return scan(s, false) }

// scan reads -?[0-9]+(\.[0-9]+)?, with ([eE][+-]?[0-9]+)? when allowExp, building nothing.
func scan(s string, allowExp bool) (Decimal, bool) {
	i, neg := 0, len(s) > 0 && s[0] == '-'
	if neg {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart := s[start:i]
	if intPart == "" {
		return Decimal{}, false
	}
	var frac string
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		frac = s[start:i]
		if frac == "" {
			return Decimal{}, false
		}
	}
	var exp int64
	if allowExp && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := i < len(s) && s[i] == '-'
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		start = i
		for ; i < len(s) && isDigit(s[i]); i++ {
			if exp < expCap {
				exp = exp*10 + int64(s[i]-'0')
			}
		}
		if i == start {
			return Decimal{}, false
		}
		exp = min(exp, expCap)
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return Decimal{}, false
	}
	return normalize(neg, intPart, frac, exp), true
}

// normalize turns int.frac × 10^exp into the decimal form.
func normalize(neg bool, intPart, frac string, exp int64) Decimal {
	d := Decimal{neg: neg}
	p := 0
	for p < len(intPart) && intPart[p] == '0' {
		p++
	}
	if p < len(intPart) {
		d.hi, d.lo = intPart[p:], frac
		d.exp = exp + int64(len(intPart)-p)
	} else {
		q := 0
		for q < len(frac) && frac[q] == '0' {
			q++
		}
		d.lo = frac[q:]
		d.exp = exp - int64(q)
	}
	for len(d.lo) > 0 && d.lo[len(d.lo)-1] == '0' {
		d.lo = d.lo[:len(d.lo)-1]
	}
	if d.lo == "" {
		for len(d.hi) > 0 && d.hi[len(d.hi)-1] == '0' {
			d.hi = d.hi[:len(d.hi)-1]
		}
	}
	if d.Digits() == 0 {
		return Decimal{}
	}
	return d
}

// AppendKey appends d's text as a map key: every decimal has exactly one (normalize keeps
// no leading or trailing zero, and zero has no digits and no sign), so equal values have
// equal keys.
func (d *Decimal) AppendKey(buf []byte) []byte {
	if d.neg {
		buf = append(buf, '-')
	}
	buf = append(append(buf, d.hi...), d.lo...)
	return strconv.AppendInt(append(buf, 'e'), d.exp, 10)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
