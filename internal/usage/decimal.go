package usage

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
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
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// Sign is -1, 0 or +1.
func (d *Decimal) Sign() int { return d.unscaled.Sign() }

// Add returns d + o exactly.
func (d *Decimal) Add(o *Decimal) Decimal {
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

// String is the canonical plain decimal form ("-12.5", "0.001", "12000"): a valid JSON
// number and a valid SQL NUMERIC literal. Equal values give equal strings.
func (d *Decimal) String() string {
	s := d.unscaled.String()
	if d.scale == 0 {
		return s
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	if pad := int(d.scale) + 1 - len(s); pad > 0 {
		s = strings.Repeat("0", pad) + s
	}
	cut := len(s) - int(d.scale)
	s = s[:cut] + "." + s[cut:]
	if neg {
		s = "-" + s
	}
	return s
}

// Canonical rewrites a decimal string (as PostgreSQL returns NUMERIC, "10.500") in the
// canonical form of String; text that is not a number is returned unchanged.
func Canonical(s string) string {
	d, err := parseStored(s)
	if err != nil {
		return s
	}
	return d.String()
}

// parseStored reads a stored decimal without the request limits (sums may exceed them).
func parseStored(s string) (Decimal, error) {
	if !isJSONNumber(s) {
		return Decimal{}, errNotNumber
	}
	d, _, err := parseLiteral(s)
	return d, err
}
