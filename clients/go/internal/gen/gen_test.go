package gen

import (
	"bytes"
	"strings"
	"testing"
)

// A small document with the constructs the Revops document uses.
const smallDoc = `{
  "openapi": "3.1.0",
  "servers": [{"url": "https://ignored.example"}],
  "paths": {
    "/v1/things": {
      "get": {"operationId": "listThings", "summary": "List things.",
        "parameters": [
          {"name": "limit", "in": "query", "schema": {"type": "integer"}},
          {"name": "starting_after", "in": "query", "schema": {"type": "string"}},
          {"name": "status", "in": "query", "schema": {"type": "string", "enum": ["on", "off"]}},
          {"name": "since", "in": "query", "schema": {"oneOf": [{"type": "string", "format": "date-time"}, {"type": "string", "pattern": "^[0-9]+$"}]}}
        ],
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ThingList"}}}}}},
      "post": {"operationId": "createThing", "summary": "Create a thing.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ThingCreate"}}}},
        "responses": {"201": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}
    },
    "/v1/things/{id}/archive": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
      "post": {"operationId": "archiveThingById", "summary": "Archive a thing.",
        "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/EmptyObject"}}}},
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}
    }
  },
  "components": {"schemas": {
    "EmptyObject": {"type": "object", "additionalProperties": false},
    "Thing": {"type": "object", "required": ["id", "status", "note", "props", "created_at"], "properties": {
      "id": {"type": "string"},
      "status": {"type": "string", "enum": ["on", "off"]},
      "note": {"type": ["string", "null"]},
      "props": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}},
      "created_at": {"type": "string", "format": "date-time"},
      "secret": {"type": "string"}
    }},
    "ThingCreate": {"type": "object", "required": ["name"], "properties": {
      "name": {"type": "string"},
      "enabled": {"type": "boolean"},
      "tags": {"type": ["array", "null"], "items": {"type": "string"}},
      "when": {"oneOf": [{"type": "string", "format": "date-time"}, {"type": "integer"}, {"type": "null"}]}
    }},
    "ThingList": {"type": "object", "required": ["data", "has_more"], "properties": {
      "data": {"type": "array", "items": {"$ref": "#/components/schemas/Thing"}},
      "has_more": {"type": "boolean"}
    }}
  }}
}`

func TestGenerateSmallDocument(t *testing.T) {
	src, err := Generate([]byte(smallDoc))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		// Nullable output field → pointer; several types → any; date-time → time.Time.
		"Note *string `json:\"note\"`",
		"Props map[string]any `json:\"props\"`",
		"CreatedAt time.Time `json:\"created_at\"`",
		// Optional output field keeps its type.
		"Secret string `json:\"secret,omitzero\"`",
		// Optional request fields: pointers, slices with omitzero; a time union is a time.
		"Enabled *bool `json:\"enabled,omitempty\"`",
		"Tags []string `json:\"tags,omitzero\"`",
		"When Nullable[time.Time] `json:\"when,omitzero\"`",
		"Name string `json:\"name\"`",
		// One enum type for the same values, wherever they appear.
		"type ThingStatus string",
		"ThingStatusOn ThingStatus = \"on\"",
		"Status ThingStatus\n",
		// Query parameters: sent only when set.
		"if !p.Since.IsZero() {",
		"q.Set(\"starting_after\", p.StartingAfter)",
		// Methods: path parameters as arguments, no body for the empty object, Id → ID.
		"func (c *Client) ArchiveThingByID(ctx context.Context, id string, opts ...RequestOption) (*Thing, error) {",
		"path := \"/v1/things/\" + url.PathEscape(id) + \"/archive\"",
		"func (c *Client) CreateThing(ctx context.Context, body *ThingCreate, opts ...RequestOption) (*Thing, error) {",
		"func (c *Client) ListThingsAll(ctx context.Context, params *ListThingsParams, opts ...RequestOption) iter.Seq2[*Thing, error] {",
	} {
		if !strings.Contains(normalize(string(src)), normalize(want)) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if strings.Contains(string(src), "ignored.example") {
		t.Error("servers leaked into the output")
	}
	again, _ := Generate([]byte(smallDoc))
	if !bytes.Equal(src, again) {
		t.Error("two runs on the same document differ")
	}
}

// A PATCH whose members may be left out, null (clear) or a value.
const nullableDoc = `{
  "openapi": "3.1.0",
  "paths": {
    "/v1/things/{id}": {
      "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
      "patch": {"operationId": "updateThing", "summary": "Update a thing.",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ThingUpdate"}}}},
        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}}
    }
  },
  "components": {"schemas": {
    "Thing": {"type": "object", "required": ["id", "email"], "properties": {
      "id": {"type": "string"},
      "email": {"type": ["string", "null"]},
      "size": {"type": ["integer", "null"]}
    }},
    "ThingUpdate": {"type": "object", "required": ["label"], "properties": {
      "email": {"type": ["string", "null"]},
      "size": {"type": ["integer", "null"]},
      "level": {"type": ["string", "null"], "enum": ["low", "high", null]},
      "label": {"type": ["string", "null"]},
      "name": {"type": "string"},
      "tags": {"type": ["array", "null"], "items": {"type": "string"}},
      "owner": {"type": "object", "properties": {"nick": {"type": ["string", "null"]}}},
      "labels": {"$ref": "#/components/schemas/Labels"}
    }},
    "Labels": {"type": ["object", "null"], "additionalProperties": {"type": ["string", "null"]}}
  }}
}`

func TestGenerateNullableRequestFields(t *testing.T) {
	src, err := Generate([]byte(nullableDoc))
	if err != nil {
		t.Fatal(err)
	}
	out := normalize(string(src))
	for _, want := range []string{
		// Optional and nullable in a request: unset, null or a value.
		"Email Nullable[string] `json:\"email,omitzero\"`",
		"Size Nullable[int64] `json:\"size,omitzero\"`",
		"Level Nullable[ThingUpdateLevel] `json:\"level,omitzero\"`",
		"Nick Nullable[string] `json:\"nick,omitzero\"`", // in a nested request object too
		// Through a $ref too: "labels": null must be sendable (a PATCH's "headers": null).
		"Labels Nullable[Labels] `json:\"labels,omitzero\"`",
		// Required and nullable: always sent, nil is null.
		"Label *string `json:\"label\"`",
		// Optional, not nullable: a pointer left out when nil.
		"Name *string `json:\"name,omitempty\"`",
		// A nil slice is left out already.
		"Tags []string `json:\"tags,omitzero\"`",
		// Responses keep pointers for null.
		"Email *string `json:\"email\"`",
		"Size *int64 `json:\"size,omitempty\"`",
	} {
		if !strings.Contains(out, normalize(want)) {
			t.Errorf("the output lacks %q", want)
		}
	}
	if strings.Contains(out, "*Nullable") || strings.Contains(out, "Nullable[[]") {
		t.Error("a Nullable where it does not belong")
	}
}

// normalize collapses gofmt's column alignment.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestGenerateRefusesWhatItCannotMap(t *testing.T) {
	for name, doc := range map[string]string{
		"not JSON":       `{`,
		"unknown ref":    strings.Replace(smallDoc, `#/components/schemas/ThingCreate"`, `#/components/schemas/Nope"`, 1),
		"no operationId": strings.Replace(smallDoc, `"operationId": "createThing", `, ``, 1),
	} {
		if _, err := Generate([]byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
