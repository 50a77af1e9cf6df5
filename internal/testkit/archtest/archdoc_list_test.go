package archtest

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// listWidth is where drawImports wraps a package's imports.
const listWidth = 96

// drawImports is the import list of g: one line per package, its imports after `→`,
// wrapped under the first of them; a package that imports nothing of the module alone.
func drawImports(g graph) []string {
	var out []string
	for _, from := range g.names {
		imps := g.imports[from]
		if len(imps) == 0 {
			out = append(out, from)
			continue
		}
		head := from + " → "
		indent := strings.Repeat(" ", utf8.RuneCountInString(head))
		line := head
		for i, imp := range imps {
			word := imp
			if i < len(imps)-1 {
				word += ","
			}
			if line != head && utf8.RuneCountInString(line)+1+len(word) > listWidth {
				out = append(out, strings.TrimRight(line, " "))
				line = indent
			}
			if line != head && line != indent {
				line += " "
			}
			line += word
		}
		out = append(out, line)
	}
	return out
}

// readImports reads the import list: each package's line, and what it draws.
func readImports(block []docLine) (lineOf map[string]int, imports map[string][]string, err error) {
	lineOf, imports = map[string]int{}, map[string][]string{}
	cur := ""
	for _, l := range block {
		text := l.text
		if strings.TrimSpace(text) == "" {
			continue
		}
		if !strings.HasPrefix(text, " ") {
			from, rest, _ := strings.Cut(text, "→")
			cur = strings.TrimSpace(from)
			if _, dup := lineOf[cur]; dup {
				return nil, nil, fmt.Errorf("%s:%d: %s is listed twice", docFile, l.n, cur)
			}
			lineOf[cur] = l.n
			text = rest
		} else if cur == "" {
			return nil, nil, fmt.Errorf("%s:%d: an indented line continues no package", docFile, l.n)
		}
		for _, imp := range strings.Split(text, ",") {
			if imp = strings.TrimSpace(imp); imp != "" {
				imports[cur] = append(imports[cur], imp)
			}
		}
	}
	return lineOf, imports, nil
}

// checkImports: the import list is the module's, package by package.
func checkImports(t *testing.T, lines []string, g graph) {
	block, _, _, err := fencedAfter(lines, importsMark)
	if err != nil {
		t.Fatal(err)
	}
	lineOf, drawn, err := readImports(block)
	if err != nil {
		t.Fatal(err)
	}
	stale := false
	for _, p := range g.names {
		n, ok := lineOf[p]
		if !ok {
			t.Errorf("%s: the import list does not name the package %s", docFile, p)
			stale = true
			continue
		}
		for _, imp := range drawn[p] {
			if !g.has(p, imp) {
				t.Errorf("%s:%d: the import list draws %s → %s, which go list does not have", docFile, n, p, imp)
				stale = true
			}
		}
		for _, imp := range g.imports[p] {
			if !slices.Contains(drawn[p], imp) {
				t.Errorf("%s:%d: %s imports %s, which the import list does not draw", docFile, n, p, imp)
				stale = true
			}
		}
	}
	for p, n := range lineOf {
		if !slices.Contains(g.names, p) {
			t.Errorf("%s:%d: the import list names %s, which is no package of the module", docFile, n, p)
			stale = true
		}
	}
	if stale {
		t.Logf("redraw the import list with: %s", redraw)
	}
}

// redrawImports writes g's import list into the document's block.
func redrawImports(t *testing.T, file string, lines []string, g graph) {
	t.Helper()
	_, open, end, err := fencedAfter(lines, importsMark)
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Concat(lines[:open+1], drawImports(g), lines[end:])
	if err := os.WriteFile(file, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("redrew the import list of %s: %d packages", docFile, len(g.names))
}

// rowRE is a table row whose first cell is a code span: the package it describes.
var rowRE = regexp.MustCompile("^\\| *`([^`]+)` *\\|")

// checkTables: under "## Packages", one row per package of the module, and no row for a
// package that is gone.
func checkTables(t *testing.T, lines []string, g graph) {
	rows := map[string]int{}
	in := false
	for i, l := range lines {
		if strings.HasPrefix(l, "## ") {
			in = l == "## Packages"
			continue
		}
		m := rowRE.FindStringSubmatch(l)
		if !in || m == nil {
			continue
		}
		if _, dup := rows[m[1]]; dup {
			t.Errorf("%s:%d: %s has a second row", docFile, i+1, m[1])
		}
		rows[m[1]] = i + 1
		if !slices.Contains(g.names, m[1]) {
			t.Errorf("%s:%d: the row of %s names no package of the module", docFile, i+1, m[1])
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no package table under \"## Packages\"", docFile)
	}
	for _, p := range g.names {
		if _, ok := rows[p]; !ok {
			t.Errorf("%s: no row of the package tables (\"## Packages\") says what %s is for", docFile, p)
		}
	}
}
