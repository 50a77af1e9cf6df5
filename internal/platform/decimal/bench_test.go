package decimal

import "testing"

// What a meter's consumer does with decimals for each usage row (read a stored value,
// add it up, keep the largest, write the figure), and what ingest does with each metric
// value (read it within the request's bounds, count its text).
var benchVals = []string{"1", "12.5", "0.001", "-3.25", "100", "99999.99", "123456789.123456789", "7"}

func BenchmarkDecimalFold(b *testing.B) {
	for range b.N {
		var sum, mx Decimal
		for _, s := range benchVals {
			v, _ := ParseStored(s)
			sum = sum.Add(&v)
			if v.Cmp(&mx) > 0 {
				mx = v
			}
		}
		_ = sum.String() + mx.String()
	}
}

func BenchmarkDecimalParseRequest(b *testing.B) {
	for range b.N {
		for _, s := range benchVals {
			d, _ := ParseBytes([]byte(s))
			_ = d.TextLen()
		}
	}
}
