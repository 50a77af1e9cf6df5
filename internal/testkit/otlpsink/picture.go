package otlpsink

import (
	"cmp"
	"errors"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
)

// row is one span of a trace drawn as a waterfall: its depth under the root, and its
// start and length in milliseconds from the trace's first span.
type row struct {
	span         Span
	depth        int
	start, width float64
}

// waterfall orders a trace's spans as a tree, children under their parent by start
// time; spans whose parent is not in the trace (the client's span) are roots.
func waterfall(trace []Span) []row {
	if len(trace) == 0 {
		return nil
	}
	ids := map[string]bool{}
	t0 := trace[0].StartNano
	for _, sp := range trace {
		ids[sp.SpanID] = true
		t0 = min(t0, sp.StartNano)
	}
	children := map[string][]Span{}
	for _, sp := range trace {
		parent := sp.ParentSpanID
		if !ids[parent] || parent == sp.SpanID { // a parent outside the trace, or a span its own parent
			parent = ""
		}
		children[parent] = append(children[parent], sp)
	}
	var rows []row
	var walk func(parent string, depth int)
	seen := map[string]bool{}
	walk = func(parent string, depth int) {
		if seen[parent] { // ids repeated or empty: draw each span once, never loop
			return
		}
		seen[parent] = true
		kids := children[parent]
		slices.SortStableFunc(kids, func(a, b Span) int { return cmp.Compare(a.StartNano, b.StartNano) })
		for _, sp := range kids {
			rows = append(rows, row{span: sp, depth: depth,
				start: float64(sp.StartNano-t0) / 1e6, width: float64(sp.EndNano-sp.StartNano) / 1e6})
			walk(sp.SpanID, depth+1)
		}
	}
	walk("", 0)
	return rows
}

// note is what a row says beside its name: the attempt and the answer's status.
func note(sp Span) string {
	var parts []string
	if a := sp.Attributes["revops.attempt"]; a != "" {
		parts = append(parts, "attempt "+a)
	}
	if s := sp.Attributes["http.response.status_code"]; s != "" {
		parts = append(parts, s)
	}
	if o := sp.Attributes["revops.outcome"]; o != "" {
		parts = append(parts, o)
	}
	return strings.Join(parts, " · ")
}

// Waterfall draws a trace as text: one line per span, indented under its parent, with
// its service, start and duration.
func Waterfall(trace []Span) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-52s %-14s %10s %10s  %s\n", "span", "service", "start ms", "ms", "")
	for _, r := range waterfall(trace) {
		name := strings.Repeat("  ", r.depth) + r.span.Name
		fmt.Fprintf(&b, "%-52s %-14s %10.1f %10.1f  %s\n", name, r.span.Service, r.start, r.width, note(r.span))
	}
	return b.String()
}

// WriteSVG draws a trace as a waterfall picture, as a trace viewer shows it: names on
// the left, each span a bar on a common time axis, coloured by service.
func WriteSVG(w io.Writer, trace []Span) error {
	if len(trace) == 0 {
		return errors.New("otlpsink: no spans to draw")
	}
	rows := waterfall(trace)
	const label, bars, height, top = 430.0, 560.0, 24.0, 34.0
	end := 0.0
	for _, r := range rows {
		end = max(end, r.start+r.width)
	}
	if end == 0 {
		end = 1
	}
	colours := map[string]string{}
	palette := []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1"}
	colour := func(service string) string {
		if c, ok := colours[service]; ok {
			return c
		}
		colours[service] = palette[len(colours)%len(palette)]
		return colours[service]
	}
	var b strings.Builder
	total := top + height*float64(len(rows)) + 30
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", label+bars+20, total)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="8" y="20" font-weight="bold">trace %s · %.1f ms</text>`+"\n", html.EscapeString(trace[0].TraceID), end)
	for i, r := range rows {
		y := top + height*float64(i)
		x := label + bars*r.start/end
		wd := max(1, bars*r.width/end)
		text := r.span.Name
		if n := note(r.span); n != "" {
			text += "  (" + n + ")"
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", 8+14*float64(r.depth), y+15, html.EscapeString(text))
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="%s"><title>%s · %s · %.1f ms</title></rect>`+"\n",
			x, y+4, wd, height-8, colour(r.span.Service), html.EscapeString(r.span.Name), html.EscapeString(r.span.Service), r.width)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" fill="#555" font-size="10">%.1f ms</text>`+"\n", min(x+wd+4, label+bars-40), y+15, r.width)
	}
	services := make([]string, 0, len(colours))
	for s := range colours {
		services = append(services, s)
	}
	slices.Sort(services)
	x := 8.0
	for _, s := range services {
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="12" height="12" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`+"\n",
			x, total-22, colours[s], x+16, total-12, html.EscapeString(cmp.Or(s, "(unnamed)")))
		x += 20 + 8*float64(len(s)+2)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
