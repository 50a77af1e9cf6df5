package api_test

import (
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/revops/revops/api"
	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/config"
)

// registeredRoutes builds the API's engine and lists its /v1 routes as "METHOD /v1/…{id}".
func registeredRoutes(t *testing.T) map[string]bool {
	t.Helper()
	cfg, err := config.Load(flag.NewFlagSet("test", flag.ContinueOnError), "serve", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Registering reaches no part: empty ones will do.
	eng := api.New(api.Deps{Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Endpoints: &webhook.Endpoints{}, Meters: &meters.Queries{}})
	out := map[string]bool{}
	for _, r := range eng.Routes() {
		if strings.HasPrefix(r.Path, "/v1/") {
			out[routeKey(r.Method, r.Path)] = true
		}
	}
	return out
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	registered := registeredRoutes(t)
	documented := loadSpec(t).operations()
	var missing, extra []string
	for r := range registered {
		if documented[r] == nil {
			missing = append(missing, r)
		}
	}
	for r := range documented {
		if !registered[r] {
			extra = append(extra, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("registered but not in api/openapi/openapi.json:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("documented but not registered:\n  %s", strings.Join(extra, "\n  "))
	}
	if len(registered) < 20 {
		t.Errorf("only %d /v1 routes found: is the route walk broken?", len(registered))
	}
}

// TestOpenAPIDocumentIsWellFormed checks what OpenAPI 3.1 requires of the document and
// what makes it usable: every $ref resolves, every schema compiles as JSON Schema 2020-12,
// operation ids are unique, path parameters are declared, each operation has a 2xx.
func TestOpenAPIDocumentIsWellFormed(t *testing.T) {
	s := loadSpec(t)
	if s.doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", s.doc["openapi"])
	}
	info := mapAt(s.doc, "info")
	if info["title"] == nil || info["version"] == nil {
		t.Errorf("info needs title and version: %v", info)
	}
	if mapAt(mapAt(s.doc, "components"), "securitySchemes")["bearerAuth"] == nil {
		t.Error("no bearerAuth security scheme")
	}
	walkRefs(t, s, s.doc)
	for name := range mapAt(mapAt(s.doc, "components"), "schemas") {
		s.schema(t, "/components/schemas/"+escapePointer(name))
	}
	ids := map[string]string{}
	param := regexp.MustCompile(`\{([^}]+)\}`)
	for key, op := range s.operations() {
		id, _ := op["operationId"].(string)
		if prev, dup := ids[id]; dup || id == "" {
			t.Errorf("%s: operationId %q empty or also used by %s", key, id, prev)
		}
		ids[id] = key
		path := strings.SplitN(key, " ", 2)[1]
		declared := pathParams(s, path, op)
		for _, m := range param.FindAllStringSubmatch(path, -1) {
			if !declared[m[1]] {
				t.Errorf("%s: path parameter %s not declared", key, m[1])
			}
		}
		has2xx := false
		for code := range mapAt(op, "responses") {
			has2xx = has2xx || strings.HasPrefix(code, "2")
		}
		if !has2xx {
			t.Errorf("%s: no 2xx response", key)
		}
	}
}

// pathParams lists the path parameters declared on the path item and the operation.
func pathParams(s *spec, path string, op map[string]any) map[string]bool {
	out := map[string]bool{}
	item := mapAt(mapAt(s.doc, "paths"), path)
	params, _ := item["parameters"].([]any)
	opParams, _ := op["parameters"].([]any)
	for _, p := range append(params, opParams...) {
		pm, _ := p.(map[string]any)
		if ref, ok := pm["$ref"].(string); ok {
			v, _ := s.lookup(strings.TrimPrefix(ref, "#"))
			pm, _ = v.(map[string]any)
		}
		if pm["in"] == "path" && pm["required"] == true {
			out[pm["name"].(string)] = true
		}
	}
	return out
}

// walkRefs fails on any "$ref" that does not point into the document.
func walkRefs(t *testing.T, s *spec, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			if _, found := s.lookup(strings.TrimPrefix(ref, "#")); !strings.HasPrefix(ref, "#/") || !found {
				t.Errorf("unresolved $ref %q", ref)
			}
		}
		for _, e := range x {
			walkRefs(t, s, e)
		}
	case []any:
		for _, e := range x {
			walkRefs(t, s, e)
		}
	}
}

// TestOpenAPIServed: any valid key reads the document, with servers set to the
// configured public URL; no key is still a 401.
func TestOpenAPIServed(t *testing.T) {
	const public = "https://api.acme.test"
	h := newHarness(t, func(c *config.Config, _ *api.Deps) { c.PublicURL = public + "/" })
	for _, k := range []string{"public sandbox", "secret live", "public live"} {
		r := h.do("GET", "/v1/openapi.json", h.key[k], nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", k, r.Status, r.Body)
		}
		var doc struct {
			OpenAPI string              `json:"openapi"`
			Servers []map[string]string `json:"servers"`
			Paths   map[string]any      `json:"paths"`
		}
		if err := json.Unmarshal(r.Body, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.OpenAPI != "3.1.0" || len(doc.Servers) != 1 || doc.Servers[0]["url"] != public || doc.Paths["/v1/deals/{id}"] == nil {
			t.Fatalf("%s: served document: openapi %q servers %v", k, doc.OpenAPI, doc.Servers)
		}
	}
	expectError(t, h.do("GET", "/v1/openapi.json", "", nil), http.StatusUnauthorized, "missing_api_key")
}
