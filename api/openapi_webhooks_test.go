package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/catalog"
)

// The webhooks section of api/openapi/openapi.json is generated from internal/platform/catalog:
//
//	go test ./api/ -run TestOpenAPIWebhooksAreTheCatalog -update-openapi-webhooks
//
// rewrites it in place (the rest of the document is left byte for byte); without the flag
// the test fails as soon as the document and the catalog differ.
var updateWebhooks = flag.Bool("update-openapi-webhooks", false, "rewrite the webhooks section of api/openapi/openapi.json from internal/platform/catalog")

const openapiPath = "openapi/openapi.json"

// webhookHeaders are the Standard Webhooks headers of every delivery (CONTRACT §8).
var webhookHeaders = []any{
	header("webhook-id", "The event id: the same on every attempt and replay, so receivers can deduplicate."),
	header("webhook-timestamp", "Unix seconds of this attempt (not of the event), for the receiver's tolerance window."),
	header("webhook-signature", "Space-separated entries, one per key that signs: \"v1,<base64 HMAC-SHA256 of id.timestamp.body>\" under an hmac-sha256 secret, "+
		"\"v1a,<base64 ed25519 signature of id.timestamp.body>\" under an ed25519 key, verified with the endpoint's public_key "+
		"(two while a rotated key, or the key of the previous scheme, still signs: CONTRACT §25)."),
}

func header(name, description string) map[string]any {
	return map[string]any{"name": name, "in": "header", "required": true, "description": description, "schema": map[string]any{"type": "string"}}
}

// webhooksSection is the OpenAPI 3.1 webhooks member: one operation per catalog type
// whose request body schema is the catalog's, unchanged.
func webhooksSection(t *testing.T) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, et := range catalog.All() {
		var schema any
		if err := json.Unmarshal(et.Schema, &schema); err != nil {
			t.Fatalf("%s: %v", et.Name, err)
		}
		subscribe := "Sent to endpoints whose event_types list it or \"*\"."
		if et.Operational {
			subscribe = "Operational: sent only to endpoints whose event_types list it; \"*\" does not match it."
		}
		out[et.Name] = map[string]any{"post": map[string]any{
			"operationId": "webhook_" + strings.ReplaceAll(et.Name, "-", "_"),
			"summary":     et.Description,
			"description": subscribe + " An endpoint whose method is GET receives the same JSON in the query parameter payload. " +
				"The schema is GET /v1/event_types's for " + et.Name + ".",
			"tags":       []any{"Webhooks"},
			"parameters": webhookHeaders,
			"requestBody": map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": schema},
			}},
			"responses": map[string]any{"200": map[string]any{
				"description": "Received: status 200 and a body containing \"<service name> API Event Received.\". " +
					"Anything else, or no answer within 30 s, is a failed attempt, retried under the endpoint's retry_policy.",
			}},
		}}
	}
	return normalize(t, out)
}

// normalize round-trips v through JSON, so that it compares with a decoded document.
func normalize(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenAPIWebhooksAreTheCatalog(t *testing.T) {
	want := webhooksSection(t)
	if *updateWebhooks {
		doc, err := os.ReadFile(openapiPath)
		if err != nil {
			t.Fatal(err)
		}
		if doc, err = spliceMember(doc, "webhooks", "paths", want); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(openapiPath, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the webhooks section of %s: rebuild to embed it", openapiPath)
		return
	}
	s := loadSpec(t)
	got := mapAt(s.doc, "webhooks")
	if names := sortedKeys(got); !slices.Equal(names, sortedKeys(want)) {
		t.Errorf("webhooks section has %v, the catalog %v", names, sortedKeys(want))
	}
	for _, et := range catalog.All() {
		var schema any
		if err := json.Unmarshal(et.Schema, &schema); err != nil {
			t.Fatal(err)
		}
		ptr := "/webhooks/" + escapePointer(et.Name) + "/post/requestBody/content/application~1json/schema"
		if doc, ok := s.lookup(ptr); !ok || !reflect.DeepEqual(doc, schema) {
			t.Errorf("%s: the document's schema differs from the catalog's", et.Name)
			continue
		}
		s.schema(t, ptr) // compiles inside the document too (its $id makes it a resource of its own)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the webhooks section is not what the catalog generates; run\n  go test ./api/ -run TestOpenAPIWebhooksAreTheCatalog -update-openapi-webhooks")
	}
}

// TestOpenAPIEventTypeEnumsAreTheCatalog: every enum of event types in the document is the
// catalog's list; a subscription's also has "*" first; a manual test's (a schema whose name
// says Test) is the seed's, the types with a sample body.
func TestOpenAPIEventTypeEnumsAreTheCatalog(t *testing.T) {
	s := loadSpec(t)
	found := 0
	var walk func(ptr string, v any)
	walk = func(ptr string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if enum, ok := x["enum"].([]any); ok && slices.Contains(enum, any("deal-created")) {
				found++
				want := catalog.Names()
				switch {
				case enum[0] == catalog.Wildcard:
					want = append([]string{catalog.Wildcard}, want...)
				case strings.Contains(ptr, "Test"):
					want = catalog.SeedTypes()
				}
				if got := fmt.Sprint(enum...); got != fmt.Sprint(anys(want)...) {
					t.Errorf("%s: enum %v, want %v", ptr, enum, want)
				}
			}
			for k, e := range x {
				walk(ptr+"/"+escapePointer(k), e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s/%d", ptr, i), e)
			}
		}
	}
	walk("", map[string]any{"paths": s.doc["paths"], "components": s.doc["components"]})
	if found < 5 {
		t.Errorf("found %d enums of event types: is the walk broken?", found)
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// spliceMember sets the top-level member name of a JSON object document written with
// two-space indentation: its value is replaced where it stands, or the member is added
// after the member after. Every other byte is kept, so hand edits elsewhere survive.
func spliceMember(doc []byte, name, after string, value any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("  ", "  ")
	if err := enc.Encode(value); err != nil {
		return nil, err
	}
	text := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("document is not a JSON object (%v)", err)
	}
	afterEnd := int64(-1)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		end := dec.InputOffset()
		switch tok {
		case name:
			start := end - int64(len(raw))
			return slices.Concat(doc[:start], text, doc[end:]), nil
		case after:
			afterEnd = end
		}
	}
	if afterEnd < 0 {
		return nil, fmt.Errorf("no top-level %q member to add %q after", after, name)
	}
	return slices.Concat(doc[:afterEnd], []byte(",\n  \""+name+"\": "), text, doc[afterEnd:]), nil
}
