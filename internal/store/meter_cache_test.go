package store

import (
	"testing"
	"time"

	"github.com/revops/revops/models"
)

// figuresOf makes n figures of a meter, as one transaction writes them.
func figuresOf(meterID string, n int) map[figureID]models.MeterFigure {
	out := map[figureID]models.MeterFigure{}
	for i := range n {
		f := models.MeterFigure{MeterID: meterID, Kind: "hour", WindowStart: time.Unix(int64(i)*3600, 0), AccountID: "acct",
			Groups: "[]", Value: "1", Slots: "0=1"}
		out[idOf(meterID, FigureKey{Kind: f.Kind, WindowStart: f.WindowStart, AccountID: f.AccountID, Groups: f.Groups})] = f
	}
	return out
}

// TestFigureCacheIsBoundedForTheProcess: the cache holds at most its bound across every
// environment, dropping the one used least recently; an environment larger than the
// whole bound is not kept at all (CONTRACT §21).
func TestFigureCacheIsBoundedForTheProcess(t *testing.T) {
	one := 0
	for _, f := range figuresOf("m", 100) {
		one += figureBytes(&f)
	}
	c := &figureCache{max: 2*one + one/2} // room for two environments of 100 figures
	c.committed("a", 0, nil, figuresOf("ma", 100))
	c.committed("b", 0, nil, figuresOf("mb", 100))
	if c.view("a", 1) == nil { // a is now the most recently used
		t.Fatal("a was not kept")
	}
	c.committed("c", 0, nil, figuresOf("mc", 100))
	if c.view("b", 1) != nil {
		t.Fatal("b, the least recently used, was kept past the bound")
	}
	if c.view("a", 1) == nil || c.view("c", 1) == nil {
		t.Fatal("a or c was dropped instead of b")
	}
	if c.bytes > c.limit() {
		t.Fatalf("cache holds %d bytes, bound %d", c.bytes, c.limit())
	}
	// a's next transaction extends its view in place; one too large for the bound drops it.
	view := c.view("a", 1)
	c.committed("a", 1, view, figuresOf("ma2", 10))
	if got := c.view("a", 2); len(got) != 110 {
		t.Fatalf("a holds %d figures after a second write, want 110", len(got))
	}
	c.committed("d", 0, nil, figuresOf("md", 400))
	if c.view("d", 1) != nil {
		t.Fatal("an environment larger than the whole cache was kept")
	}
	if c.bytes > c.limit() {
		t.Fatalf("cache holds %d bytes, bound %d", c.bytes, c.limit())
	}
}
