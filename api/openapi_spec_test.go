package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/revops/revops/api/openapi"
)

// specURL names the embedded document for the JSON Schema compiler; "$ref"s inside it
// are "#/components/…", resolved within it.
const specURL = "https://revops.test/openapi.json"

// spec is the OpenAPI document with a JSON Schema (draft 2020-12, as OpenAPI 3.1 uses)
// compiler over it; formats (date-time, uuid, email, …) are asserted.
type spec struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

func loadSpec(t *testing.T) *spec {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openapi.Raw(), &doc); err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapi.Raw()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(specURL, inst); err != nil {
		t.Fatal(err)
	}
	return &spec{doc: doc, compiler: c, compiled: map[string]*jsonschema.Schema{}}
}

// schema compiles the schema at a JSON pointer of the document.
func (s *spec) schema(t *testing.T, pointer string) *jsonschema.Schema {
	t.Helper()
	if sch, ok := s.compiled[pointer]; ok {
		return sch
	}
	sch, err := s.compiler.Compile(specURL + "#" + pointer)
	if err != nil {
		t.Fatalf("compile %s: %v", pointer, err)
	}
	s.compiled[pointer] = sch
	return sch
}

// lookup follows a JSON pointer ("/paths/~1v1~1deals/post") in the document.
func (s *spec) lookup(pointer string) (any, bool) {
	var v any = s.doc
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[unescapePointer(tok)]; !ok {
			return nil, false
		}
	}
	return v, true
}

func escapePointer(s string) string   { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }
func unescapePointer(s string) string { return strings.NewReplacer("~1", "/", "~0", "~").Replace(s) }

// response finds the documented response of an operation for a status, following a
// "$ref" to components/responses, and returns its JSON pointer.
func (s *spec) response(route, method string, status int) (string, bool) {
	p := "/paths/" + escapePointer(route) + "/" + strings.ToLower(method) + "/responses/" + strconv.Itoa(status)
	v, ok := s.lookup(p)
	if !ok {
		return "", false
	}
	if ref, isRef := v.(map[string]any)["$ref"].(string); isRef {
		p = strings.TrimPrefix(ref, "#")
		if _, ok := s.lookup(p); !ok {
			return "", false
		}
	}
	return p, true
}

// validate checks a real response against the document: the operation must document
// its status, every header documented for it must be present, and the JSON body must
// match the schema. route "" is for requests matching no route (404/405): those answer
// with the error envelope.
func (s *spec) validate(t *testing.T, route, method string, r response) {
	t.Helper()
	var schemaPtr string
	if route == "" {
		schemaPtr = "/components/schemas/Error"
	} else {
		p, ok := s.response(route, method, r.Status)
		if !ok {
			t.Errorf("%s %s answered %d, which the document does not list: %s", method, route, r.Status, r.Body)
			return
		}
		resp, _ := s.lookup(p)
		for name := range mapAt(resp, "headers") {
			if r.Header.Get(name) == "" {
				t.Errorf("%s %s %d: documented header %s missing", method, route, r.Status, name)
			}
		}
		schemaPtr = p + "/content/application~1json/schema"
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s %s %d: Content-Type %q", method, route, r.Status, ct)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Body))
	if err != nil {
		t.Errorf("%s %s %d: body is not JSON: %s", method, route, r.Status, r.Body)
		return
	}
	if err := s.schema(t, schemaPtr).Validate(inst); err != nil {
		t.Errorf("%s %s %d: body does not match %s:\n%v\nbody: %s", method, route, r.Status, schemaPtr, err, r.Body)
	}
}

func mapAt(v any, key string) map[string]any {
	m, _ := v.(map[string]any)
	out, _ := m[key].(map[string]any)
	return out
}

// operations lists "METHOD /path/{param}" of every documented operation.
func (s *spec) operations() map[string]map[string]any {
	out := map[string]map[string]any{}
	for path, item := range mapAt(s.doc, "paths") {
		for method, op := range item.(map[string]any) {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				out[strings.ToUpper(method)+" "+path] = op.(map[string]any)
			}
		}
	}
	return out
}

// routeKey is how gin's "/v1/deals/:id" is written in OpenAPI: "/v1/deals/{id}".
func routeKey(method, ginPath string) string {
	parts := strings.Split(ginPath, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") || strings.HasPrefix(p, "*") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return fmt.Sprintf("%s %s", method, strings.Join(parts, "/"))
}
