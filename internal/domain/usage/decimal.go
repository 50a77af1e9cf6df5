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

// String is the canonical plain decimal form ("-12.5", "0.001", "12000"): a valid JSON
// number and a valid SQL NUMERIC literal. Equal values give equal strings.
func (d *Decimal) String() string {
	if d.unscaled.IsInt64() { // the usual case: no big.Int text
		var buf [48]byte
		return string(d.appendSmall(buf[:0]))
	}
	return d.bigString()
}

// textLen is len(d.String()), counted without writing the usual int64 value out.
func (d *Decimal) textLen() int {
	if !d.unscaled.IsInt64() {
		return len(d.bigString()) // ≥ 19 digits and at most MaxSignificantDigits: short anyway
	}
	v := d.unscaled.Int64()
	n := 1
	for u := absInt64(v); u >= 10; u /= 10 {
		n++
	}
	if d.scale > 0 {
		n = max(n, int(d.scale)+1) + 1 // digits, padded to 0.00ddd, and the point
	}
	if v < 0 {
		n++
	}
	return n
}

// appendText appends String's text.
func (d *Decimal) appendText(dst []byte) []byte {
	if d.unscaled.IsInt64() {
		return d.appendSmall(dst)
	}
	return append(dst, d.bigString()...)
}

func (d *Decimal) bigString() string {
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

// appendSmall is String for an unscaled value that fits in an int64, same text.
func (d *Decimal) appendSmall(dst []byte) []byte {
	v := d.unscaled.Int64()
	if d.scale == 0 {
		return strconv.AppendInt(dst, v, 10)
	}
	if v < 0 {
		dst = append(dst, '-')
	}
	var tmp [20]byte
	digits := strconv.AppendUint(tmp[:0], absInt64(v), 10)
	scale := int(d.scale)
	if len(digits) <= scale { // 0.00ddd
		dst = append(dst, '0', '.')
		for range scale - len(digits) {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	cut := len(digits) - scale
	dst = append(dst, digits[:cut]...)
	dst = append(dst, '.')
	return append(dst, digits[cut:]...)
}

func absInt64(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1 // also right for math.MinInt64
	}
	return uint64(v)
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

// ParseStored reads a decimal kept by Revops (a figure or a stored metric value), without
// the request limits: sums may exceed them.
func ParseStored(s string) (Decimal, error) { return parseStored(s) }

// CanonicalNumber is the one spelling of a JSON number literal (1, 1.0 and 1e0 → "1"):
// the canonical decimal, or for numbers beyond what Decimal holds exactly, a normalised
// spelling of the literal itself.
func CanonicalNumber(s string) string { return canonicalNumber(s) }
