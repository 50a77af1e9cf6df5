// Command generate writes the Go client's generated code from the Revops OpenAPI
// document, a file or a running server's GET /v1/openapi.json:
//
//	go run ./internal/generate -spec ../../api/openapi/openapi.json -out zz_generated.go
//	REVOPS_API_KEY=… go run ./internal/generate -spec http://127.0.0.1:8080/v1/openapi.json -out zz_generated.go
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/revops/revops/clients/go/internal/gen"
)

func main() {
	spec := flag.String("spec", "../../api/openapi/openapi.json", "OpenAPI document: a file, or an http(s) URL fetched with $REVOPS_API_KEY")
	out := flag.String("out", "zz_generated.go", "file to write")
	flag.Parse()
	if err := run(*spec, *out); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(spec, out string) error {
	doc, err := gen.Load(context.Background(), spec, os.Getenv("REVOPS_API_KEY"))
	if err != nil {
		return err
	}
	src, err := gen.Generate(doc)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}
