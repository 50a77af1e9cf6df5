package otlpsink

import (
	"strings"
	"testing"
)

// A trace is drawn as its tree: children under their parent in start order, a span
// whose parent is outside the trace (the client's) at the top.
func TestWaterfallIsTheTree(t *testing.T) {
	ms := uint64(1e6)
	trace := []Span{
		{SpanID: "c", ParentSpanID: "a", Name: "second child", StartNano: 5 * ms, EndNano: 6 * ms},
		{SpanID: "b", ParentSpanID: "a", Name: "first child", StartNano: 2 * ms, EndNano: 4 * ms},
		{SpanID: "a", ParentSpanID: "client", Name: "root", Service: "revops-api", StartNano: 1 * ms, EndNano: 9 * ms},
		{SpanID: "d", ParentSpanID: "b", Name: "grandchild", StartNano: 3 * ms, EndNano: 4 * ms,
			Attributes: map[string]string{"revops.attempt": "2", "http.response.status_code": "200"}},
	}
	var got []string
	for _, r := range waterfall(trace) {
		got = append(got, strings.Repeat(".", r.depth)+r.span.Name)
	}
	if strings.Join(got, " ") != "root .first child ..grandchild .second child" {
		t.Fatalf("order %q", got)
	}
	text := Waterfall(trace)
	if !strings.Contains(text, "    grandchild") || !strings.Contains(text, "attempt 2 · 200") {
		t.Fatalf("waterfall:\n%s", text)
	}
	var svg strings.Builder
	if err := WriteSVG(&svg, trace); err != nil || !strings.HasPrefix(svg.String(), "<svg") || strings.Count(svg.String(), "<title>") != 4 {
		t.Fatalf("svg (%v):\n%s", err, svg.String())
	}
}

// Nothing to draw, or ids that would make a loop (empty, or a span its own parent), give
// an error or a flat list, never a panic or an endless walk.
func TestWaterfallOfOddTraces(t *testing.T) {
	if err := WriteSVG(&strings.Builder{}, nil); err == nil {
		t.Error("an empty trace was drawn")
	}
	odd := []Span{{SpanID: "", Name: "no id"}, {SpanID: "", Name: "no id either"}, {SpanID: "s", ParentSpanID: "s", Name: "own parent"}}
	if rows := waterfall(odd); len(rows) != 3 {
		t.Errorf("%d rows, want 3", len(rows))
	}
}
