package usage

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecode1000 is the CPU cost of decoding, validating, hashing and aggregating a
// batch of 1000 metrics (the HTTP+PostgreSQL benchmark is in ./usagebench).
func BenchmarkDecode1000(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"transaction_id":"tx","mode":"increment","event_metrics":[`)
	for i := range 1000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"account_id":"acct_%d","product":"platform","metric_name":"m%d","metric_value":%d.5,"metric_resolution":"hour","metadata":{"region":"eu-west-1"}}`, i%250, i%4, i%97)
	}
	sb.WriteString("]}")
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		batch, err := Decode(body, testNow)
		if err != nil {
			b.Fatal(err)
		}
		_ = batch.Hash()
		_ = Rollups(batch)
	}
}
