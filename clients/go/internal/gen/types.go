package gen

import (
	"fmt"
	"slices"
	"strings"
)

// enum is one set of string values; fields with the same set share the type.
type enum struct {
	Name   string
	Values []string // in the document's order
	Uses   []string // where it appears, e.g. "Deal.status"
}

// goType returns the Go type of s, declaring the named types it needs. derived is the
// name an inline object or enum gets (before typeNames/enumNames), input says whether the
// schema is sent (optional fields become pointers), use says where s is, for messages.
func (g *generator) goType(s *schema, derived string, input bool, use string) (string, error) {
	if s == nil {
		return "any", nil
	}
	if s.Ref != "" {
		name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/")
		if _, known := g.doc.Components.Schemas[name]; !ok || !known {
			return "", fmt.Errorf("%s: unknown $ref %s", use, s.Ref)
		}
		return typeName(name), nil
	}
	if branches := append(slices.Clone(s.OneOf), s.AnyOf...); len(branches) > 0 {
		// Every union in the document is "a time, written as RFC 3339 or as Unix
		// seconds"; that is one Go type. Any other union stays raw JSON for the caller.
		if isTimeUnion(branches) {
			return "time.Time", nil
		}
		return "json.RawMessage", nil
	}
	types := s.nonNull()
	if len(types) != 1 {
		return "any", nil // no type, or several (["string","number","boolean"])
	}
	switch types[0] {
	case "string":
		switch {
		case len(s.Enum) > 0:
			return g.enum(s, derived, use), nil
		case s.Format == "date-time":
			return "time.Time", nil
		}
		return "string", nil
	case "integer":
		return "int64", nil
	case "number":
		return "float64", nil
	case "boolean":
		return "bool", nil
	case "array":
		item, err := g.goType(s.Items, derived+"Item", input, use+"[]")
		return "[]" + item, err
	case "object":
		if len(s.Properties) > 0 {
			name := typeName(derived)
			return name, g.declareStruct(name, s, input)
		}
		if a := s.additional(); a != nil {
			v, err := g.goType(a, derived+"Value", input, use+"{}")
			if a.nullable() && pointable(v) {
				v = "*" + v
			}
			return "map[string]" + v, err
		}
		return "map[string]any", nil
	}
	return "", fmt.Errorf("%s: unsupported type %q", use, types[0])
}

// isTimeUnion says whether every branch is a time: an RFC 3339 string, a string of
// digits or an integer (Unix seconds), or null.
func isTimeUnion(branches []*schema) bool {
	sawTime := false
	for _, b := range branches {
		types := b.nonNull()
		switch {
		case len(b.Type) == 1 && b.Type[0] == "null":
		case len(types) == 1 && types[0] == "string" && b.Format == "date-time":
			sawTime = true
		case len(types) == 1 && types[0] == "string" && b.Pattern == "^[0-9]+$":
		case len(types) == 1 && types[0] == "integer":
		default:
			return false
		}
	}
	return sawTime
}

// pointable says whether a nil pointer is how a field of type t says "absent": not for
// slices, maps and interfaces, which have their own nil.
func pointable(t string) bool {
	return !strings.HasPrefix(t, "[]") && !strings.HasPrefix(t, "map[") && t != "any" && t != "json.RawMessage"
}

// field returns a property's Go type and the options of its json tag:
//   - an optional field of a request that may be null is a Nullable (nullable.go), left out
//     when unset, so that a PATCH can send null to clear it as well as leave it alone;
//   - a value that may be null is a pointer (nil is null);
//   - an optional field of a request is a pointer left out when nil, so that a zero value
//     can be sent on purpose (enabled: false);
//   - an optional field of a response keeps its type and zero value;
//   - slices and maps are left out when nil (omitzero), so an empty one is sent as [] or {}.
func field(t string, s *schema, required, input bool) (string, string) {
	switch {
	case !pointable(t):
		if required {
			return t, ""
		}
		return t, ",omitzero"
	case !required && input && s.nullable():
		return "Nullable[" + t + "]", ",omitzero"
	case !required && (input || s.nullable()):
		return "*" + t, ",omitempty"
	case s.nullable():
		return "*" + t, ""
	case !required:
		return t, ",omitzero"
	}
	return t, ""
}

func (g *generator) declareStruct(name string, s *schema, input bool) error {
	var b strings.Builder
	b.WriteString(comment("", describe(name, s.Description)))
	fmt.Fprintf(&b, "type %s struct {\n", name)
	for _, prop := range sortedKeys(s.Properties) {
		ps := s.Properties[prop]
		t, err := g.goType(ps, name+exported(prop), input, name+"."+prop)
		if err != nil {
			return err
		}
		t, opts := field(t, g.resolved(ps), s.requires(prop), input)
		doc := ps.Description
		if len(ps.Const) > 0 {
			doc = strings.TrimSpace("Always " + string(ps.Const) + ". " + doc)
		}
		b.WriteString(comment("\t", doc))
		fmt.Fprintf(&b, "\t%s %s `json:\"%s%s\"`\n", exported(prop), t, prop, opts)
	}
	b.WriteString("}\n")
	return g.declare(name, b.String())
}

// resolved is the schema a $ref names (s itself otherwise): whether a property may be
// null is said by the schema it refers to ("headers": {"$ref": "EndpointHeadersInput"},
// whose type includes "null").
func (g *generator) resolved(s *schema) *schema {
	if s == nil || s.Ref == "" {
		return s
	}
	if r, ok := g.doc.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]; ok && r != nil {
		return r
	}
	return s
}

// describe makes a doc comment start with the name, as Go doc comments do.
func describe(name, desc string) string {
	if desc == "" {
		return name + " is generated from the OpenAPI document."
	}
	return name + ": " + desc
}

// declare records a named type; two declarations of one name must be the same type.
func (g *generator) declare(name, src string) error {
	if old, ok := g.decls[name]; ok && old != src {
		return fmt.Errorf("two different types are named %s; add a name to typeNames or enumNames", name)
	}
	g.decls[name] = src
	return nil
}

func (g *generator) enum(s *schema, derived, use string) string {
	var values []string
	for _, v := range s.Enum {
		if str, ok := v.(string); ok {
			values = append(values, str)
		}
	}
	sorted := slices.Sorted(slices.Values(values))
	key := strings.Join(sorted, "\x00")
	e, ok := g.enums[key]
	if !ok {
		e = &enum{Name: enumName(derived), Values: values}
		g.enums[key] = e
	}
	e.Uses = append(e.Uses, use)
	return e.Name
}

func (g *generator) declareEnums() error {
	for _, key := range sortedKeys(g.enums) {
		e := g.enums[key]
		var b strings.Builder
		fmt.Fprintf(&b, "// %s is one of the constants below (used by %s).\n", e.Name, strings.Join(e.Uses, ", "))
		fmt.Fprintf(&b, "type %s string\n\nconst (\n", e.Name)
		for _, v := range e.Values {
			fmt.Fprintf(&b, "\t%s %s = %q\n", constName(e.Name, v), e.Name, v)
		}
		b.WriteString(")\n")
		if err := g.declare(e.Name, b.String()); err != nil {
			return err
		}
	}
	return nil
}

func (g *generator) isEnum(t string) bool {
	for _, e := range g.enums {
		if e.Name == t {
			return true
		}
	}
	return false
}
