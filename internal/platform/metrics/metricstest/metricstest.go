// Package metricstest scrapes the process's Prometheus metrics the way Prometheus does,
// through metrics.Serve, for tests of the packages that record them.
package metricstest

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/metrics"
)

// Page is one /metrics scrape in the text exposition format.
type Page string

// Scrape serves the metrics on a free loopback port and reads /metrics once.
func Scrape(t testing.TB) Page {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, _, err := metrics.Serve(ctx, "127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v\n%s", res.StatusCode, err, b)
	}
	return Page(b)
}

// Value is a series' value, written `name{a="x",b="y"}` with labels in name order
// (histogram buckets: "le" last); 0 when the series is absent, as a counter not yet
// incremented is.
func (p Page) Value(t testing.TB, series string) float64 {
	t.Helper()
	v, _ := p.Lookup(t, series)
	return v
}

// Lookup is Value that also tells whether the series is present.
func (p Page) Lookup(t testing.TB, series string) (float64, bool) {
	t.Helper()
	for _, line := range strings.Split(string(p), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("series %s: value %q", series, v)
			}
			return f, true
		}
	}
	return 0, false
}

// Series lists the lines of the series whose text starts with prefix.
func (p Page) Series(prefix string) []string {
	var out []string
	for _, line := range strings.Split(string(p), "\n") {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return out
}
