package archtest

import (
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/architecture.md is drawn from `go list` (issue 42, point 6), in three parts the
// tests below read, each found after its marker (an HTML comment, invisible once
// rendered):
//   - the layers (layersMark): a fenced block of arrows `a, b → c, d  what for`, kept by
//     hand; a name is a package, a pattern of path.Match (`internal/domain/*`) or a tree
//     (`internal/testkit/...`). Every arrow must be made by some import of each package
//     (or pattern) on its left into each on its right, and every import of the module
//     must be allowed by some arrow: the layers are the direction rule.
//   - the imports (importsMark): a fenced block, one line per package of the module, its
//     production imports of the module after `→` (continuation lines indented), written
//     by `go test ./internal/testkit/archtest/ -run TestArchitectureDoc -update`.
//   - the package tables: under "## Packages", one row per package, its path first.

const (
	docFile     = "docs/architecture.md"
	layersMark  = "<!-- archtest: layers -->"
	importsMark = "<!-- archtest: imports -->"
	redraw      = "go test ./internal/testkit/archtest/ -run TestArchitectureDoc -update"
)

var update = flag.Bool("update", false, "redraw the imports of "+docFile+" from go list")

// graph is the module's production imports (GoFiles, as `go list` gives them; test-only
// imports are not counted) between its own packages, relative to the module.
type graph struct {
	names   []string            // every package of the module, sorted
	imports map[string][]string // importer → imported, sorted
}

func moduleGraph(t *testing.T) graph {
	t.Helper()
	pkgs := modulePackages(t)
	g := graph{imports: map[string][]string{}}
	for path := range pkgs {
		g.names = append(g.names, rel(path))
	}
	slices.Sort(g.names)
	for path, p := range pkgs {
		for _, imp := range p.Imports {
			if pkgs[imp] != nil { // clients/go is a module of its own
				g.imports[rel(path)] = append(g.imports[rel(path)], rel(imp))
			}
		}
		slices.Sort(g.imports[rel(path)])
	}
	return g
}

func (g graph) has(from, to string) bool { return slices.Contains(g.imports[from], to) }

// docLine is a line of the document, numbered from 1.
type docLine struct {
	n    int
	text string
}

// fencedAfter is the fenced block that follows mark: its lines, and the indexes (in
// lines) of its opening and closing fences.
func fencedAfter(lines []string, mark string) (block []docLine, open, end int, err error) {
	at := slices.Index(lines, mark)
	if at < 0 {
		return nil, 0, 0, fmt.Errorf("%s has no line %q", docFile, mark)
	}
	open = at + 1
	for open < len(lines) && strings.TrimSpace(lines[open]) == "" {
		open++
	}
	if open == len(lines) || !strings.HasPrefix(lines[open], "```") {
		return nil, 0, 0, fmt.Errorf("%s:%d: %q is not followed by a fenced block", docFile, at+1, mark)
	}
	for end = open + 1; end < len(lines); end++ {
		if strings.HasPrefix(lines[end], "```") {
			return block, open, end, nil
		}
		block = append(block, docLine{end + 1, lines[end]})
	}
	return nil, 0, 0, fmt.Errorf("%s:%d: the fenced block after %q is not closed", docFile, open+1, mark)
}

// arrow is one line of a drawing: every name of from imports every name of to.
type arrow struct {
	line     int
	from, to []string
}

var nameRE = regexp.MustCompile(`^[a-z0-9_./*-]+$`)

// names reads a list `a, b, c` from the start of s and returns the rest (a note).
func names(s string) (list []string, rest string) {
	fields := strings.Fields(s)
	for i, f := range fields {
		name := strings.TrimSuffix(f, ",")
		if !nameRE.MatchString(name) {
			return list, strings.Join(fields[i:], " ")
		}
		list = append(list, name)
		if !strings.HasSuffix(f, ",") {
			return list, strings.Join(fields[i+1:], " ")
		}
	}
	return list, ""
}

// parseArrow reads `a, b → c, d  note`; ok is false for a line that draws nothing.
func parseArrow(l docLine) (a arrow, ok bool, err error) {
	left, right, found := strings.Cut(l.text, "→")
	if !found {
		if strings.TrimSpace(l.text) != "" {
			return a, false, fmt.Errorf("%s:%d: %q draws no arrow", docFile, l.n, l.text)
		}
		return a, false, nil
	}
	from, rest := names(left)
	to, _ := names(right)
	if len(from) == 0 || len(to) == 0 || strings.TrimSpace(rest) != "" || strings.Contains(right, "→") {
		return a, false, fmt.Errorf("%s:%d: %q is not `a, b → c, d  note`", docFile, l.n, l.text)
	}
	return arrow{l.n, from, to}, true, nil
}

// matching lists the packages a name stands for: itself, a path.Match pattern, or a
// tree (`dir/...`: dir and every package under it).
func matching(name string, all []string) []string {
	var out []string
	base, tree := strings.CutSuffix(name, "/...")
	for _, p := range all {
		if m, _ := path.Match(name, p); m || (tree && (p == base || strings.HasPrefix(p, base+"/"))) {
			out = append(out, p)
		}
	}
	return out
}

// readDoc is the document's lines.
func readDoc(t *testing.T) (string, []string) {
	t.Helper()
	file := filepath.Join(moduleRoot(t), docFile)
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return file, strings.Split(string(src), "\n")
}

// TestArchitectureDoc: docs/architecture.md draws the module as `go list` has it — its
// layers allow every import and draw none that is not made, its import list is the
// module's, and its tables name every package (issue 42, point 6).
func TestArchitectureDoc(t *testing.T) {
	g := moduleGraph(t)
	file, lines := readDoc(t)
	if *update {
		redrawImports(t, file, lines, g)
		_, lines = readDoc(t)
	}
	t.Run("layers", func(t *testing.T) { checkLayers(t, lines, g) })
	t.Run("imports", func(t *testing.T) { checkImports(t, lines, g) })
	t.Run("tables", func(t *testing.T) { checkTables(t, lines, g) })
}

// checkLayers: every arrow of the layers is made, and every import allowed by one.
func checkLayers(t *testing.T, lines []string, g graph) {
	block, _, _, err := fencedAfter(lines, layersMark)
	if err != nil {
		t.Fatal(err)
	}
	var arrows []arrow
	for _, l := range block {
		a, ok, err := parseArrow(l)
		if err != nil {
			t.Error(err)
		}
		if ok {
			arrows = append(arrows, a)
		}
	}
	set := func(name string, line int) []string {
		ps := matching(name, g.names)
		if len(ps) == 0 {
			t.Errorf("%s:%d: %s names no package of the module", docFile, line, name)
		}
		return ps
	}
	for _, a := range arrows {
		for _, from := range a.from {
			for _, to := range a.to {
				if !anyImport(g, set(from, a.line), set(to, a.line)) {
					t.Errorf("%s:%d: the layers draw %s → %s, which no import of go list makes", docFile, a.line, from, to)
				}
			}
		}
	}
	for _, from := range g.names {
		for _, to := range g.imports[from] {
			if !allowed(arrows, g.names, from, to) {
				t.Errorf("%s imports %s, which no arrow of the layers in %s allows: draw it there if it goes with the grain, or import otherwise",
					from, to, docFile)
			}
		}
	}
}

// anyImport tells whether some package of from imports some package of to.
func anyImport(g graph, from, to []string) bool {
	for _, f := range from {
		for _, imp := range g.imports[f] {
			if slices.Contains(to, imp) {
				return true
			}
		}
	}
	return false
}

// allowed tells whether an arrow of the layers covers the import from → to.
func allowed(arrows []arrow, all []string, from, to string) bool {
	covers := func(list []string, p string) bool {
		return slices.ContainsFunc(list, func(name string) bool { return slices.Contains(matching(name, all), p) })
	}
	return slices.ContainsFunc(arrows, func(a arrow) bool { return covers(a.from, from) && covers(a.to, to) })
}
