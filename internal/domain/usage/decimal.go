package usage

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/revops/revops/internal/platform/jsonnum"
)

// MaxSignificantDigits bounds a metric value's precision (that of IEEE decimal128), so
// that sums stay exact and well inside PostgreSQL NUMERIC's range.
const MaxSignificantDigits = 34

// Decimal is an exact decimal number: unscaled × 10^-scale. Values are kept exact from the
// JSON text to the database; float64 would turn 0.1 + 0.2 into 0.30000000000000004.
type Decimal struct {
	unscaled big.Int
	scale    int32
}

var (
	errNotNumber = errors.New("not a JSON number")
	errRange     = errors.New("out of range")
	errPrecision = errors.New("too many significant digits")
)

// ParseDecimal reads a JSON number literal exactly. It refuses what is not a JSON number,
// values beyond float64's finite range (1e400 is "infinite" for most JSON readers), values
// so small they would read as 0, and more than MaxSignificantDigits significant digits.
func ParseDecimal(s string) (Decimal, error) {
	if d, ok := parseShort([]byte(s)); ok {
		return d, nil
	}
	return parseLong(s)
}

// parseDecimal is ParseDecimal of a member's bytes.
func parseDecimal(raw []byte) (Decimal, error) {
	if d, ok := parseShort(raw); ok {
		return d, nil
	}
	return parseLong(string(raw))
}

// parseShort reads the usual value without allocating text: -?digits(.digits)? with at
// most 18 digits and no exponent. It fits in an int64, is finite, is not a tiny value
// read as 0 and is within the precision limit, so no check of parseLong can fail; the
// result is the one parseLong gives. ok is false for anything else.
func parseShort(b []byte) (Decimal, bool) {
	var d Decimal
	i, neg := 0, len(b) > 0 && b[0] == '-'
	if neg {
		i++
	}
	if i >= len(b) || (b[i] == '0' && i+1 < len(b) && b[i+1] != '.') {
		return d, false // empty, or a leading zero (not JSON)
	}
	var v uint64
	var scale, n int32
	dot := false
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case isDigit(c):
			v = v*10 + uint64(c-'0')
			n++
			if dot {
				scale++
			}
		case c == '.' && !dot && i > 0 && isDigit(b[i-1]) && i+1 < len(b):
			dot = true
		default:
			return d, false
		}
	}
	if n == 0 || n > 18 {
		return d, false
	}
	for scale > 0 && v%10 == 0 { // 2.50 is 2.5, as parseLong trims trailing zeros
		v /= 10
		scale--
	}
	if v == 0 {
		return d, true // zero, whatever its spelling
	}
	d.unscaled.SetUint64(v)
	if neg {
		d.unscaled.Neg(&d.unscaled)
	}
	d.scale = scale
	return d, true
}

// parseLong is the general parser, for what parseShort does not take.
func parseLong(s string) (Decimal, error) {
	if !isJSONNumber(s) {
		return Decimal{}, errNotNumber
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return Decimal{}, errRange
	}
	d, sig, err := parseLiteral(s)
	if sig > 0 && f == 0 {
		return Decimal{}, errRange // so small that float64 readers would see 0
	}
	if err != nil {
		return Decimal{}, err
	}
	return d, nil
}

// parseLiteral reads a JSON number literal exactly and counts its significant digits.
func parseLiteral(s string) (d Decimal, significant int, err error) {
	mant, exp, _ := strings.Cut(strings.ToLower(s), "e")
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	scale := int64(len(frac))
	if exp != "" {
		e, err := strconv.ParseInt(exp, 10, 32)
		if err != nil {
			return d, 0, errRange
		}
		scale -= e
	}
	if digits == "" { // zero, whatever its exponent
		return d, 0, nil
	}
	trimmed := strings.TrimRight(digits, "0")
	scale -= int64(len(digits) - len(trimmed))
	if len(trimmed) > MaxSignificantDigits {
		return d, len(trimmed), errPrecision
	}
	if scale > 100000 || scale < -1000 {
		return d, len(trimmed), errRange
	}
	d.unscaled.SetString(trimmed, 10)
	if neg {
		d.unscaled.Neg(&d.unscaled)
	}
	if scale < 0 { // keep scale ≥ 0: 12e3 is 12000
		d.unscaled.Mul(&d.unscaled, pow10(int32(-scale)))
		scale = 0
	}
	d.scale = int32(scale)
	return d, len(trimmed), nil
}

// isJSONNumber checks the JSON number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(s string) bool {
	end, ok := jsonnum.LiteralEnd(s, 0)
	return ok && end == len(s)
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
