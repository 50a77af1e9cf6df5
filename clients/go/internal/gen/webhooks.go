package gen

import (
	"fmt"
	"slices"
	"strings"
)

// webhookEvent declares WebhookEvent, the body of every delivery described by the
// document's webhooks section: the "event" header plus one object member per kind
// (account, deal, webhook_endpoint). A member whose properties are a component schema's
// (the webhook's account is an Account) takes that type; validation-only parts of the
// payload schemas (allOf/anyOf tying prices to precision) change no type.
func (g *generator) webhookEvent() error {
	names := sortedKeys(g.doc.Webhooks)
	if len(names) == 0 {
		return nil
	}
	members := map[string]*schema{}
	for _, name := range names {
		op := g.doc.Webhooks[name]["post"]
		if op == nil || op.RequestBody == nil || op.RequestBody.Content["application/json"].Schema == nil {
			return fmt.Errorf("webhook %s has no JSON body", name)
		}
		for prop, ps := range op.RequestBody.Content["application/json"].Schema.Properties {
			if _, ok := members[prop]; !ok {
				members[prop] = ps
			}
		}
	}
	if ev := members["event"]; ev != nil {
		// Each webhook's event.type is a const; together they are the event types.
		clone := *ev
		clone.Properties = map[string]*schema{}
		for k, v := range ev.Properties {
			clone.Properties[k] = v
		}
		clone.Properties["type"] = &schema{Type: typeList{"string"}, Enum: stringsToAny(names)}
		members["event"] = &clone
	}
	var b strings.Builder
	b.WriteString("// WebhookEvent is the body of a webhook delivery: Event says what happened, and the\n")
	b.WriteString("// member named by the type's object is set (Account for account-*, Deal for deal-*,\n")
	b.WriteString("// WebhookEndpoint for endpoint-disabled). Webhooks.Verify returns it.\n")
	b.WriteString("type WebhookEvent struct {\n")
	for _, prop := range sortedKeys(members) {
		ps := members[prop]
		t := g.componentWithProperties(ps)
		if t == "" {
			var err error
			t, err = g.goType(ps, "WebhookEvent"+exported(prop), false, "webhook."+prop)
			if err != nil {
				return err
			}
		}
		if prop == "event" {
			fmt.Fprintf(&b, "\t%s %s `json:\"%s\"`\n", exported(prop), t, prop)
			continue
		}
		fmt.Fprintf(&b, "\t%s *%s `json:\"%s,omitempty\"`\n", exported(prop), t, prop)
	}
	b.WriteString("}\n")
	return g.declare("WebhookEvent", b.String())
}

// componentWithProperties returns the Go type of the component schema whose property
// names are exactly s's, or "".
func (g *generator) componentWithProperties(s *schema) string {
	want := sortedKeys(s.Properties)
	for _, name := range sortedKeys(g.doc.Components.Schemas) {
		c := g.doc.Components.Schemas[name]
		if len(c.Properties) > 0 && slices.Equal(sortedKeys(c.Properties), want) {
			return typeName(name)
		}
	}
	return ""
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
