package decimal

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/revops/revops/internal/platform/jsonnum"
)

// MaxSignificantDigits bounds a metric value's precision (that of IEEE decimal128), so
// that sums stay exact and well inside PostgreSQL NUMERIC's range.
const MaxSignificantDigits = 34

// Why Parse or ParseStored refused a text; usage words each for its parameter (§5).
var (
	ErrNotNumber = errors.New("not a JSON number")
	ErrRange     = errors.New("out of range")
	ErrPrecision = errors.New("too many significant digits")
)

// Parse reads a JSON number literal exactly, within usage's bounds. It refuses what is
// not a JSON number, values beyond float64's finite range (1e400 is "infinite" for most
// JSON readers), values so small they would read as 0, and more than
// MaxSignificantDigits significant digits.
func Parse(s string) (Decimal, error) {
	if isShort(s) {
		d, _ := scan(s, false)
		return d, nil
	}
	return parseLong(s)
}

// ParseBytes is Parse of a member's bytes.
func ParseBytes(raw []byte) (Decimal, error) { return Parse(string(raw)) }

// isShort tells the usual value, which no check of parseLong can refuse:
// -?digits(.digits)? with at most 18 digits and no exponent. It fits in an int64, is
// finite, is not a tiny value read as 0 and is within the precision limit; scan reads
// it as parseLong does.
func isShort(b string) bool {
	i := 0
	if len(b) > 0 && b[0] == '-' {
		i++
	}
	if i >= len(b) || (b[i] == '0' && i+1 < len(b) && b[i+1] != '.') {
		return false // empty, or a leading zero (not JSON)
	}
	n, dot := 0, false
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case isDigit(c):
			n++
		case c == '.' && !dot && i > 0 && isDigit(b[i-1]) && i+1 < len(b):
			dot = true
		default:
			return false
		}
	}
	return n > 0 && n <= 18
}

// parseLong is the general parser, for what isShort does not take.
func parseLong(s string) (Decimal, error) {
	if !isJSONNumber(s) {
		return Decimal{}, ErrNotNumber
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return Decimal{}, ErrRange
	}
	d, sig, err := parseLiteral(s)
	if sig > 0 && f == 0 {
		return Decimal{}, ErrRange // so small that float64 readers would see 0
	}
	if err != nil {
		return Decimal{}, err
	}
	return d, nil
}

// parseLiteral reads a JSON number literal exactly and counts its significant digits:
// its exponent must fit in 32 bits, its digits be at most MaxSignificantDigits, and its
// scale (digits after the point, written out) lie within -1000..100000.
func parseLiteral(s string) (d Decimal, significant int, err error) {
	if _, exp, ok := strings.Cut(strings.ToLower(s), "e"); ok {
		if _, err := strconv.ParseInt(exp, 10, 32); err != nil {
			return d, 0, ErrRange
		}
	}
	d, _ = scan(s, true)
	n := d.Digits()
	if n == 0 { // zero, whatever its exponent
		return Decimal{}, 0, nil
	}
	if n > MaxSignificantDigits {
		return Decimal{}, n, ErrPrecision
	}
	if scale := int64(n) - d.exp; scale > 100000 || scale < -1000 {
		return Decimal{}, n, ErrRange
	}
	return d, n, nil
}

// isJSONNumber checks the JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(s string) bool {
	end, ok := jsonnum.LiteralEnd(s, 0)
	return ok && end == len(s)
}

// ParseStored reads a decimal kept by Revops (a figure or a stored metric value), without
// the request limits: sums may exceed them.
func ParseStored(s string) (Decimal, error) {
	if !isJSONNumber(s) {
		return Decimal{}, ErrNotNumber
	}
	d, _, err := parseLiteral(s)
	return d, err
}

// Canonical rewrites a decimal string (as PostgreSQL returns NUMERIC, "10.500") in the
// canonical form of String; text that is not a number is returned unchanged.
func Canonical(s string) string {
	d, err := ParseStored(s)
	if err != nil {
		return s
	}
	return d.String()
}

// CanonicalNumber is the one spelling of a JSON number literal (1, 1.0 and 1e0 → "1"):
// the canonical decimal, or for numbers beyond what Decimal holds exactly, a normalised
// spelling of the literal itself.
func CanonicalNumber(s string) string {
	if d, _, err := parseLiteral(s); err == nil {
		return d.String()
	}
	return strings.ToLower(s)
}
