package revops

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/revops/revops/clients/go/internal/gen"
)

// TestGeneratedMatchesDocument fails when zz_generated.go is not what the generator makes
// of the repository's OpenAPI document: the API changed and the client was not
// regenerated, or the generated file was edited by hand.
func TestGeneratedMatchesDocument(t *testing.T) {
	doc, err := os.ReadFile("../../api/openapi/openapi.json")
	if err != nil {
		t.Skipf("no OpenAPI document next to the client (%v): run the test from the repository", err)
	}
	checkGenerated(t, doc, "api/openapi/openapi.json")
}

func checkGenerated(t *testing.T, doc []byte, source string) {
	t.Helper()
	want, err := gen.Generate(doc)
	if err != nil {
		t.Fatalf("generate from %s: %v", source, err)
	}
	got, err := os.ReadFile("zz_generated.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("zz_generated.go does not match %s: run `go generate ./...` in clients/go and commit the result\n%s",
			source, firstDifference(got, want))
	}
}

// firstDifference shows the first line that differs, so the failure says what changed.
func firstDifference(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			return fmt.Sprintf("line %d:\n  checked in: %s\n  generated:  %s", i+1, gl, wl)
		}
	}
	return ""
}
