package usage

import (
	"strconv"
	"strings"
)

// Decimal as text: its canonical form, and stored decimals read back.

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

// ParseStored reads a decimal kept by Revops (a figure or a stored metric value), without
// the request limits: sums may exceed them.
func ParseStored(s string) (Decimal, error) { return parseStored(s) }

// CanonicalNumber is the one spelling of a JSON number literal (1, 1.0 and 1e0 → "1"):
// the canonical decimal, or for numbers beyond what Decimal holds exactly, a normalised
// spelling of the literal itself.
func CanonicalNumber(s string) string { return canonicalNumber(s) }
