// Package jsonnum holds the number rule of CONTRACT §15: a number a client stores or sends
// in free JSON (usage metadata, account properties, a filter test's payload) must be
// finite and at most MaxText characters when written out in plain decimal. PostgreSQL keeps such numbers as numeric and prints
// them in full, so 1e131000 — eight bytes sent — would come back as 131,001 characters on
// every read, and 1e-16384 does not fit numeric at all (a 500). The length is computed
// from the literal's digits and exponent, never by writing the number out.
package jsonnum

import "errors"

// MaxText bounds a number's plain decimal text.
const MaxText = 64

// MaxExponentDigits bounds an exponent's significant digits. Within a 1 MiB body no
// mantissa can bring a larger exponent back under MaxText, and it keeps the arithmetic
// below far from overflow and PostgreSQL's own exponent limit (about 2^30).
const MaxExponentDigits = 6

// Code is the CONTRACT §4 fault code for a number this package refuses.
const Code = "invalid_number"

var (
	// ErrNotNumber: the text is not a JSON number.
	ErrNotNumber = errors.New("is not a JSON number")
	// ErrTooLong: the number is finite in JSON but too long written out (or its exponent
	// has more than MaxExponentDigits digits).
	ErrTooLong = errors.New("is too long written out")
)

// Check tells whether lit is a JSON number whose plain decimal text is at most MaxText
// characters. Its cost is linear in len(lit) whatever the exponent.
func Check[T ~string | ~[]byte](lit T) error {
	n, err := TextLen(lit)
	if err != nil {
		return err
	}
	if n > MaxText {
		return ErrTooLong
	}
	return nil
}

// TextLen is the length of lit written in plain decimal as PostgreSQL's numeric stores and
// prints it: no exponent, no sign on zero, the digits sent after the point kept (1.50
// stays 1.50, 1.5e-3 is 0.0015, 15e1 is 150, -0.0e-2 is 0.000). It fails with
// ErrNotNumber when lit is not a JSON number and ErrTooLong when the exponent has more
// than MaxExponentDigits significant digits.
func TextLen[T ~string | ~[]byte](lit T) (int, error) {
	i, neg := 0, len(lit) > 0 && lit[0] == '-'
	if neg {
		i++
	}
	// Digits of the mantissa, point removed: sig counts them from the first non-zero one.
	var intLen, fracLen, sig int
	switch {
	case i < len(lit) && lit[i] == '0':
		i++
		intLen = 1
	case i < len(lit) && lit[i] >= '1' && lit[i] <= '9':
		for ; i < len(lit) && isDigit(lit[i]); i++ {
			intLen++
		}
		sig = intLen
	default:
		return 0, ErrNotNumber
	}
	if i < len(lit) && lit[i] == '.' {
		for i++; i < len(lit) && isDigit(lit[i]); i++ {
			fracLen++
			if sig > 0 || lit[i] != '0' {
				sig++
			}
		}
		if fracLen == 0 {
			return 0, ErrNotNumber
		}
	}
	exp := 0
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		expNeg := i < len(lit) && lit[i] == '-'
		if i < len(lit) && (lit[i] == '-' || lit[i] == '+') {
			i++
		}
		start, digits := i, 0
		for ; i < len(lit) && isDigit(lit[i]); i++ {
			if digits > 0 || lit[i] != '0' {
				if digits++; digits > MaxExponentDigits {
					return 0, ErrTooLong
				}
				exp = exp*10 + int(lit[i]-'0')
			}
		}
		if i == start {
			return 0, ErrNotNumber
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(lit) {
		return 0, ErrNotNumber
	}
	// The value is (the sig significant digits) × 10^(exp − fracLen); PostgreSQL keeps
	// max(0, fracLen − exp) digits after the point and at least one before it.
	scale := max(0, fracLen-exp)
	n := 1 // "0" before the point of a zero or of a value below 1
	if sig > 0 {
		n = max(1, sig+exp-fracLen)
		if neg {
			n++
		}
	}
	if scale > 0 {
		n += 1 + scale
	}
	return n, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// LiteralEnd is the index just past the JSON number literal that starts at lit[i], and
// whether one does: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, whatever its length.
// Scanners of JSON text use it to step over a number (and to check one) without building
// anything.
func LiteralEnd[T ~string | ~[]byte](lit T, i int) (int, bool) {
	if i < len(lit) && lit[i] == '-' {
		i++
	}
	switch {
	case i < len(lit) && lit[i] == '0':
		i++
	case i < len(lit) && lit[i] >= '1' && lit[i] <= '9':
		i = digitsEnd(lit, i)
	default:
		return i, false
	}
	if i < len(lit) && lit[i] == '.' {
		if i++; i >= len(lit) || !isDigit(lit[i]) {
			return i, false
		}
		i = digitsEnd(lit, i)
	}
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		if i++; i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			i++
		}
		if i >= len(lit) || !isDigit(lit[i]) {
			return i, false
		}
		i = digitsEnd(lit, i)
	}
	return i, true
}

func digitsEnd[T ~string | ~[]byte](lit T, i int) int {
	for i < len(lit) && isDigit(lit[i]) {
		i++
	}
	return i
}
