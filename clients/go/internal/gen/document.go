package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The parts of an OpenAPI 3.1 document the generator reads. Anything else (servers,
// tags, security, examples) does not change the client and is ignored.
type document struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Webhooks   map[string]map[string]*operation      `json:"webhooks"`
	Components struct {
		Schemas    map[string]*schema    `json:"schemas"`
		Parameters map[string]*parameter `json:"parameters"`
	} `json:"components"`
}

type operation struct {
	OperationID string       `json:"operationId"`
	Summary     string       `json:"summary"`
	Parameters  []*parameter `json:"parameters"`
	RequestBody *struct {
		Required bool                 `json:"required"`
		Content  map[string]mediaType `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content map[string]mediaType `json:"content"`
	} `json:"responses"`
}

type mediaType struct {
	Schema *schema `json:"schema"`
}

type parameter struct {
	Ref      string  `json:"$ref"`
	Name     string  `json:"name"`
	In       string  `json:"in"`
	Required bool    `json:"required"`
	Schema   *schema `json:"schema"`
	Desc     string  `json:"description"`
}

type schema struct {
	Ref         string             `json:"$ref"`
	Type        typeList           `json:"type"`
	Format      string             `json:"format"`
	Enum        []any              `json:"enum"`
	Const       json.RawMessage    `json:"const"`
	Properties  map[string]*schema `json:"properties"`
	Required    []string           `json:"required"`
	Items       *schema            `json:"items"`
	AddlProps   json.RawMessage    `json:"additionalProperties"`
	OneOf       []*schema          `json:"oneOf"`
	AnyOf       []*schema          `json:"anyOf"`
	Description string             `json:"description"`
	Pattern     string             `json:"pattern"`
}

// typeList is "type", which OpenAPI 3.1 (JSON Schema 2020-12) allows to be a string or
// an array such as ["string","null"]: the reason off-the-shelf generators fail on our
// document (see GENERATING.md).
type typeList []string

func (t *typeList) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
		return json.Unmarshal(b, (*[]string)(t))
	}
	var one string
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*t = typeList{one}
	return nil
}

// nonNull is the schema's types without "null".
func (s *schema) nonNull() []string {
	var out []string
	for _, t := range s.Type {
		if t != "null" {
			out = append(out, t)
		}
	}
	return out
}

// nullable says whether null is a valid value: a "null" type, a null in the enum, or a
// {"type":"null"} branch of a oneOf.
func (s *schema) nullable() bool {
	if slices.Contains(s.Type, "null") || slices.Contains(s.Enum, nil) {
		return true
	}
	for _, b := range append(slices.Clone(s.OneOf), s.AnyOf...) {
		if len(b.Type) == 1 && b.Type[0] == "null" {
			return true
		}
	}
	return false
}

func (s *schema) requires(prop string) bool { return slices.Contains(s.Required, prop) }

// additional returns the schema of additionalProperties when it is one (not a boolean).
func (s *schema) additional() *schema {
	if len(s.AddlProps) == 0 || s.AddlProps[0] != '{' {
		return nil
	}
	var a schema
	if json.Unmarshal(s.AddlProps, &a) != nil {
		return nil
	}
	return &a
}

// sortedKeys returns a map's keys in order, so that the output never depends on map order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func parseDocument(b []byte) (*document, error) {
	var d document
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("read OpenAPI document: %w", err)
	}
	if len(d.Paths) == 0 || len(d.Components.Schemas) == 0 {
		return nil, fmt.Errorf("read OpenAPI document: no paths or no component schemas")
	}
	return &d, nil
}

// operations lists the document's operations sorted by path and method.
func (d *document) operations() ([]pathOp, error) {
	var ops []pathOp
	for _, path := range sortedKeys(d.Paths) {
		item := d.Paths[path]
		for _, method := range []string{"get", "put", "post", "patch", "delete"} {
			raw, ok := item[method]
			if !ok {
				continue
			}
			var op operation
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			params, err := d.resolveParams(item["parameters"], op.Parameters)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			op.Parameters = params
			ops = append(ops, pathOp{Path: path, Method: strings.ToUpper(method), Op: &op})
		}
	}
	return ops, nil
}

type pathOp struct {
	Path, Method string
	Op           *operation
}

// resolveParams merges the path item's parameters with the operation's (the operation's
// win by name and location) and follows $refs into components.parameters.
func (d *document) resolveParams(itemRaw json.RawMessage, opParams []*parameter) ([]*parameter, error) {
	var itemParams []*parameter
	if len(itemRaw) > 0 {
		if err := json.Unmarshal(itemRaw, &itemParams); err != nil {
			return nil, err
		}
	}
	var out []*parameter
	seen := map[string]int{}
	for _, p := range append(itemParams, opParams...) {
		if p.Ref != "" {
			name := strings.TrimPrefix(p.Ref, "#/components/parameters/")
			r, ok := d.Components.Parameters[name]
			if !ok {
				return nil, fmt.Errorf("unknown parameter %s", p.Ref)
			}
			p = r
		}
		key := p.In + ":" + p.Name
		if i, ok := seen[key]; ok {
			out[i] = p
			continue
		}
		seen[key] = len(out)
		out = append(out, p)
	}
	return out, nil
}
