package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// namesUsed lists the names p's production files select from the package imp.
func namesUsed(t *testing.T, p *pkg, imp string) []string {
	t.Helper()
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		local := ""
		for _, spec := range f.Imports {
			if path, _ := strconv.Unquote(spec.Path.Value); path == imp {
				local = filepath.Base(path)
				if spec.Name != nil {
					local = spec.Name.Name
				}
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
					seen[sel.Sel.Name] = true
				}
			}
			return true
		})
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Bounds of production code (issue 42, docs/STYLE: a file past ~400 lines or a function
// past ~60 is a prompt to split; these are the hard limits).
const (
	maxFileLines = 400
	maxFuncLines = 80
)

// longFuncs are the production functions allowed past maxFuncLines, each with its
// reason: tables that read best whole.
var longFuncs = map[string]string{
	"internal/store/meters.go init": "SQL migration registrations: one statement list per migration",
}

// TestProductionSizes: no production Go file over maxFileLines lines and no function
// over maxFuncLines (generated code, the client libraries and test tools aside).
func TestProductionSizes(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(root, path)
		r = filepath.ToSlash(r)
		if d.IsDir() {
			if r == "clients" || r == "internal/testkit" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(r, ".go") || strings.HasSuffix(r, "_test.go") || strings.HasPrefix(d.Name(), "zz_generated") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if lines := strings.Count(string(src), "\n"); lines > maxFileLines {
			t.Errorf("%s has %d lines (at most %d)", r, lines, maxFileLines)
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			key := r + " " + fn.Name.Name
			if _, ok := longFuncs[key]; ok {
				seen[key] = true
				continue
			}
			if n > maxFuncLines {
				t.Errorf("%s: %s has %d lines (at most %d)", r, fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range longFuncs {
		if !seen[key] {
			t.Errorf("longFuncs names %s, which no longer exists: remove it", key)
		}
	}
}
