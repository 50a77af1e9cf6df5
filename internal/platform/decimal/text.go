package decimal

// Decimal as text: its canonical form.

// String is the canonical plain decimal form ("-12.5", "0.001", "12000"): a valid JSON
// number and a valid SQL NUMERIC literal. Equal values give equal strings.
func (d *Decimal) String() string {
	var buf [48]byte
	if n := d.TextLen(); n > len(buf) {
		return string(d.AppendText(make([]byte, 0, n)))
	}
	return string(d.AppendText(buf[:0]))
}

// TextLen is len(d.String()), counted without writing it.
func (d *Decimal) TextLen() int {
	n := d.Digits()
	if n == 0 {
		return 1
	}
	var l int
	switch {
	case d.exp >= int64(n): // an integer: the digits, then zeros
		l = int(d.exp)
	case d.exp > 0: // the point among the digits
		l = n + 1
	default: // 0.00ddd
		l = 2 + int(-d.exp) + n
	}
	if d.neg {
		l++
	}
	return l
}

// AppendText appends String's text.
func (d *Decimal) AppendText(dst []byte) []byte {
	n := d.Digits()
	if n == 0 {
		return append(dst, '0')
	}
	if d.neg {
		dst = append(dst, '-')
	}
	switch {
	case d.exp >= int64(n):
		dst = append(append(dst, d.hi...), d.lo...)
		return appendZeros(dst, d.exp-int64(n))
	case d.exp > 0:
		return d.appendPoint(dst, int(d.exp))
	default:
		dst = appendZeros(append(dst, '0', '.'), -d.exp)
		return append(append(dst, d.hi...), d.lo...)
	}
}

// appendPoint appends the digits with the point after the first at of them.
func (d *Decimal) appendPoint(dst []byte, at int) []byte {
	if at <= len(d.hi) {
		dst = append(dst, d.hi[:at]...)
		dst = append(dst, '.')
		return append(append(dst, d.hi[at:]...), d.lo...)
	}
	dst = append(dst, d.hi...)
	dst = append(dst, d.lo[:at-len(d.hi)]...)
	dst = append(dst, '.')
	return append(dst, d.lo[at-len(d.hi):]...)
}

func appendZeros(dst []byte, n int64) []byte {
	for ; n > 0; n-- {
		dst = append(dst, '0')
	}
	return dst
}
