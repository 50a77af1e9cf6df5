// Package catalogtest validates webhook bodies against the catalog's JSON Schemas, for
// tests of any package (the e2e receivers', the API's events). Formats (uuid, date,
// date-time, email, …) are asserted, not only annotated.
package catalogtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/revops/revops/internal/platform/catalog"
)

var (
	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

// Schema compiles the catalog's schema of an event type.
func Schema(eventType string) (*jsonschema.Schema, error) {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[eventType]; ok {
		return s, nil
	}
	t, ok := catalog.Lookup(eventType)
	if !ok {
		return nil, fmt.Errorf("event type %q is not in the catalog", eventType)
	}
	s, err := Compile(t.Schema)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", eventType, err)
	}
	compiled[eventType] = s
	return s, nil
}

// Compile compiles one JSON Schema document (draft 2020-12 unless it says otherwise),
// asserting formats.
func Compile(doc []byte) (*jsonschema.Schema, error) {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	// Load it under its own $id, so that failures name the type's schema.
	url := "urn:revops:catalogtest:schema"
	if m, ok := inst.(map[string]any); ok {
		if id, ok := m["$id"].(string); ok && id != "" {
			url = id
		}
	}
	if err := c.AddResource(url, inst); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// Validate checks a delivered body against the schema of the type it names in
// event.type, and returns that type.
func Validate(body []byte) (string, error) {
	var head struct {
		Event struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return "", fmt.Errorf("body is not a JSON object with an event member: %w", err)
	}
	return head.Event.Type, ValidateAs(head.Event.Type, body)
}

// ValidateAs checks a body against the schema of eventType.
func ValidateAs(eventType string, body []byte) error {
	s, err := Schema(eventType)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("%s body does not match its schema: %w", eventType, err)
	}
	return nil
}
