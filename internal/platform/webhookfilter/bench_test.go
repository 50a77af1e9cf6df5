package webhookfilter_test

import (
	"testing"

	"github.com/revops/revops/internal/platform/webhookfilter"
)

// The cost of §25 filters per delivery: a deal body decoded once per event, and a 4 KiB
// filter of maximum depth evaluated on it per endpoint (bigFilter: every $in list
// compared in full, the matching branch last).

func BenchmarkMatchDoc4KiB(b *testing.B) {
	f, err := webhookfilter.Parse(bigFilter(b))
	if err != nil {
		b.Fatal(err)
	}
	doc, err := webhookfilter.NewReader(f).Decode([]byte(dealBody))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := f.MatchDoc(doc); err != nil || !ok {
			b.Fatal("the filter no longer matches", err)
		}
	}
}

// BenchmarkDecodeDeal is what decoding the deal body costs for bigFilter.
func BenchmarkDecodeDeal(b *testing.B) {
	f, err := webhookfilter.Parse(bigFilter(b))
	if err != nil {
		b.Fatal(err)
	}
	rd := webhookfilter.NewReader(f)
	body := []byte(dealBody)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rd.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatch4KiB is decode and evaluate together: one endpoint's whole cost.
func BenchmarkMatch4KiB(b *testing.B) {
	f, err := webhookfilter.Parse(bigFilter(b))
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(dealBody)
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := f.Match(body); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkParse4KiB is what reading a stored filter costs, should the caller parse it
// per event rather than keep the parsed one.
func BenchmarkParse4KiB(b *testing.B) {
	raw := bigFilter(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := webhookfilter.Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}
