package webhookfilter

import "strings"

// decimal is an exact decimal read from a JSON number or a decimal string without
// building anything: its significant digits are hi followed by lo (substrings of the
// text, the point between them dropped), with no leading or trailing zero, and its value
// is 0.(hi lo) × 10^exp. Zero has no digits and is never negative.
type decimal struct {
	neg    bool
	hi, lo string
	exp    int64
}

// expCap saturates exponents: a payload may hold 1e999999999999, but every filter operand
// is bounded by jsonnum (at most 64 characters written out), so any exponent beyond the
// cap compares the same as the true one against every operand.
const expCap = 1 << 40

func (d *decimal) digits() int { return len(d.hi) + len(d.lo) }

func (d *decimal) sign() int {
	switch {
	case d.digits() == 0:
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// cmpDecimal orders two decimals: -1, 0 or 1.
func cmpDecimal(x, y *decimal) int {
	sx, sy := x.sign(), y.sign()
	if sx != sy {
		if sx < sy {
			return -1
		}
		return 1
	}
	if sx == 0 {
		return 0
	}
	m := cmpMagnitude(x, y)
	if sx < 0 {
		return -m
	}
	return m
}

func cmpMagnitude(x, y *decimal) int {
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
	switch nx, ny := x.digits(), y.digits(); {
	case nx < ny:
		return -1
	case nx > ny:
		return 1
	}
	return 0
}

// parseNumber reads a JSON number literal (as encoding/json has checked it).
func parseNumber(s string) (decimal, bool) { return parseDecimal(s, true) }

// parseDecimalString reads a decimal string: -?[0-9]+(\.[0-9]+)?.
func parseDecimalString(s string) (decimal, bool) { return parseDecimal(s, false) }

func parseDecimal(s string, allowExp bool) (decimal, bool) {
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
		return decimal{}, false
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
			return decimal{}, false
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
			return decimal{}, false
		}
		exp = min(exp, expCap)
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return decimal{}, false
	}
	return normalize(neg, intPart, frac, exp), true
}

// normalize turns int.frac × 10^exp into the decimal form.
func normalize(neg bool, intPart, frac string, exp int64) decimal {
	d := decimal{neg: neg}
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
	if d.digits() == 0 {
		return decimal{}
	}
	return d
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
