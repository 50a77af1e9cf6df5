package gen

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// method is one operation as the client exposes it.
type method struct {
	Name, HTTP, Path, Summary string
	PathArgs                  []string // Go argument names, in path order
	Params                    string   // the query parameters' struct, "" when none
	ParamsRequired            bool     // a query parameter is required: params must not be nil
	Body                      string   // the request body's type, "" when none
	BodyRequired              bool
	Result                    string
	ListItem                  string // item type when the result is a starting_after list
	PageItem                  string // item type when the result pages with page/next_page
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

func (g *generator) method(po pathOp) (*method, error) {
	op := po.Op
	if op.OperationID == "" {
		return nil, fmt.Errorf("%s %s has no operationId", po.Method, po.Path)
	}
	m := &method{Name: typeName(exported(op.OperationID)), HTTP: po.Method, Path: po.Path, Summary: op.Summary}
	for _, match := range pathParam.FindAllStringSubmatch(po.Path, -1) {
		m.PathArgs = append(m.PathArgs, unexported(match[1]))
	}
	if err := g.queryParams(m, op); err != nil {
		return nil, err
	}
	if rb := op.RequestBody; rb != nil {
		s := rb.Content["application/json"].Schema
		// An operation whose body is the empty object (actions, deletes) takes no body
		// argument and sends none.
		if s != nil && s.Ref != "#/components/schemas/EmptyObject" {
			t, err := g.goType(s, m.Name+"Body", true, m.Name+" body")
			if err != nil {
				return nil, err
			}
			m.Body, m.BodyRequired = t, rb.Required
		}
	}
	for _, code := range sortedKeys(op.Responses) {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		t, err := g.goType(op.Responses[code].Content["application/json"].Schema, m.Name+"Result", false, m.Name+" result")
		if err != nil {
			return nil, err
		}
		m.Result = t
		break
	}
	if m.Result == "" {
		return nil, fmt.Errorf("%s has no 2xx JSON response", m.Name)
	}
	g.paging(m, op)
	return m, nil
}

// queryParams declares the struct of an operation's query parameters, with the method
// that encodes the fields that are set (not zero) into a query string.
func (g *generator) queryParams(m *method, op *operation) error {
	var fields, encode strings.Builder
	name := m.Name + "Params"
	for _, p := range op.Parameters {
		if p.In != "query" {
			continue // path parameters are arguments; Idempotency-Key is the client's
		}
		t, err := g.goType(p.Schema, name+exported(p.Name), false, op.OperationID+"?"+p.Name)
		if err != nil {
			return err
		}
		f := exported(p.Name)
		doc := p.Desc
		if doc == "" && p.Schema != nil {
			doc = p.Schema.Description
		}
		if p.Required {
			doc = strings.TrimSpace(doc + " Required.")
			m.ParamsRequired = true
		}
		fields.WriteString(comment("\t", doc))
		fmt.Fprintf(&fields, "\t%s %s\n", f, t)
		enc, err := g.encodeParam(p.Name, "p."+f, t)
		if err != nil {
			return fmt.Errorf("%s?%s: %w", op.OperationID, p.Name, err)
		}
		encode.WriteString(enc)
	}
	if fields.Len() == 0 {
		return nil
	}
	m.Params = name
	src := fmt.Sprintf(`// %[1]s holds the query parameters of %[2]s. A zero field is left out of the query.
type %[1]s struct {
%[3]s}

func (p *%[1]s) values() url.Values {
	if p == nil {
		return nil
	}
	q := url.Values{}
%[4]s	return q
}
`, name, m.Name, fields.String(), encode.String())
	return g.declare(name, src)
}

func (g *generator) encodeParam(name, v, t string) (string, error) {
	switch {
	case t == "string":
		return fmt.Sprintf("\tif %s != \"\" {\n\t\tq.Set(%q, %s)\n\t}\n", v, name, v), nil
	case g.isEnum(t):
		return fmt.Sprintf("\tif %s != \"\" {\n\t\tq.Set(%q, string(%s))\n\t}\n", v, name, v), nil
	case t == "int64":
		return fmt.Sprintf("\tif %s != 0 {\n\t\tq.Set(%q, strconv.FormatInt(%s, 10))\n\t}\n", v, name, v), nil
	case t == "bool":
		return fmt.Sprintf("\tif %s {\n\t\tq.Set(%q, \"true\")\n\t}\n", v, name), nil
	case t == "time.Time":
		return fmt.Sprintf("\tif !%s.IsZero() {\n\t\tq.Set(%q, %s.UTC().Format(time.RFC3339Nano))\n\t}\n", v, name, v), nil
	case t == "map[string]string":
		// style: deepObject, explode: true → name[key]=value.
		return fmt.Sprintf("\tfor k, val := range %s {\n\t\tq.Set(\"%s[\"+k+\"]\", val)\n\t}\n", v, name), nil
	}
	return "", fmt.Errorf("no query encoding for type %s", t)
}

// paging recognises the two list shapes: {data, has_more} paged by starting_after (the
// id of the last item), and {data, next_page} paged by page.
func (g *generator) paging(m *method, op *operation) {
	var hasStartingAfter, hasPage bool
	for _, p := range op.Parameters {
		hasStartingAfter = hasStartingAfter || (p.In == "query" && p.Name == "starting_after")
		hasPage = hasPage || (p.In == "query" && p.Name == "page")
	}
	res := g.doc.Components.Schemas[reverseTypeName(m.Result)]
	if res == nil || res.Properties["data"] == nil || res.Properties["data"].Items == nil {
		return
	}
	items := res.Properties["data"].Items
	item, err := g.goType(items, "", false, m.Name+" item")
	if err != nil || items.Ref == "" {
		return
	}
	switch {
	case hasStartingAfter && res.Properties["has_more"] != nil && g.doc.Components.Schemas[strings.TrimPrefix(items.Ref, "#/components/schemas/")].Properties["id"] != nil:
		m.ListItem = item
	case hasPage && res.Properties["next_page"] != nil:
		m.PageItem = item
	}
}

// reverseTypeName finds the component schema a Go type name came from.
func reverseTypeName(goName string) string {
	for k, v := range typeNames {
		if v == goName {
			return k
		}
	}
	return goName
}

func unexported(s string) string {
	e := exported(s)
	if e == "" {
		return e
	}
	if initialisms[strings.ToUpper(e)] {
		return strings.ToLower(e)
	}
	return strings.ToLower(e[:1]) + e[1:]
}

func (m *method) render() string {
	var b strings.Builder
	args := []string{"ctx context.Context"}
	for _, a := range m.PathArgs {
		args = append(args, a+" string")
	}
	if m.Params != "" {
		args = append(args, "params *"+m.Params)
	}
	if m.Body != "" {
		args = append(args, "body *"+m.Body)
	}
	args = append(args, "opts ...RequestOption")
	summary := strings.TrimSuffix(strings.TrimSpace(m.Summary), ".")
	fmt.Fprintf(&b, "// %s calls %s %s: %s.\n", m.Name, m.HTTP, m.Path, summary)
	fmt.Fprintf(&b, "func (c *Client) %s(%s) (*%s, error) {\n", m.Name, strings.Join(args, ", "), m.Result)
	for _, a := range m.PathArgs {
		fmt.Fprintf(&b, "\tif %s == \"\" {\n\t\treturn nil, missingArgument(%q, %q)\n\t}\n", a, m.Name, a)
	}
	if m.ParamsRequired {
		fmt.Fprintf(&b, "\tif params == nil {\n\t\treturn nil, missingArgument(%q, \"params\")\n\t}\n", m.Name)
	}
	if m.BodyRequired {
		fmt.Fprintf(&b, "\tif body == nil {\n\t\treturn nil, missingArgument(%q, \"body\")\n\t}\n", m.Name)
	}
	fmt.Fprintf(&b, "\tpath := %s\n", pathExpr(m.Path))
	query, payload := "nil", "nil"
	if m.Params != "" {
		query = "params.values()"
	}
	switch {
	case m.Body != "" && m.BodyRequired:
		payload = "body"
	case m.Body != "":
		// A nil *T in an interface is not a nil interface: pass nil itself.
		b.WriteString("\tvar payload any\n\tif body != nil {\n\t\tpayload = body\n\t}\n")
		payload = "payload"
	}
	fmt.Fprintf(&b, "\tvar out %s\n", m.Result)
	fmt.Fprintf(&b, "\tif err := c.call(ctx, %q, path, %s, %s, &out, opts); err != nil {\n\t\treturn nil, err\n\t}\n", m.HTTP, query, payload)
	b.WriteString("\treturn &out, nil\n}\n")
	return b.String()
}

// pathExpr is the Go expression of a path, its parameters escaped:
// "/v1/deals/" + url.PathEscape(id) + "/submit".
func pathExpr(path string) string {
	var parts []string
	last := 0
	for _, loc := range pathParam.FindAllStringSubmatchIndex(path, -1) {
		if loc[0] > last {
			parts = append(parts, strconv.Quote(path[last:loc[0]]))
		}
		parts = append(parts, "url.PathEscape("+unexported(path[loc[2]:loc[3]])+")")
		last = loc[1]
	}
	if last < len(path) {
		parts = append(parts, strconv.Quote(path[last:]))
	}
	return strings.Join(parts, " + ")
}

// renderIterator writes NameAll, which walks every page of a list operation.
func (m *method) renderIterator() string {
	if m.ListItem == "" && m.PageItem == "" {
		return ""
	}
	args := []string{"ctx context.Context"}
	call := []string{"ctx"}
	for _, a := range m.PathArgs {
		args = append(args, a+" string")
		call = append(call, a)
	}
	args = append(args, "params *"+m.Params, "opts ...RequestOption")
	call = append(call, "&p", "opts...")
	var b strings.Builder
	if m.ListItem != "" {
		fmt.Fprintf(&b, `// %[1]sAll iterates over every item %[1]s lists, fetching each next page (starting
// after the last item's id) as the loop reaches it. An error ends the loop: it is yielded
// with a nil item.
func (c *Client) %[1]sAll(%[2]s) iter.Seq2[*%[3]s, error] {
	return listAll(func(after string) ([]%[3]s, bool, error) {
		var p %[4]s
		if params != nil {
			p = *params
		}
		if after != "" {
			p.StartingAfter = after
		}
		page, err := c.%[1]s(%[5]s)
		if err != nil {
			return nil, false, err
		}
		return page.Data, page.HasMore, nil
	}, func(item *%[3]s) string { return item.ID })
}
`, m.Name, strings.Join(args, ", "), m.ListItem, m.Params, strings.Join(call, ", "))
		return b.String()
	}
	nilCheck := ""
	if m.ParamsRequired {
		nilCheck = fmt.Sprintf("\tif params == nil {\n\t\treturn failedSeq[*%s](missingArgument(%q, \"params\"))\n\t}\n", m.PageItem, m.Name+"All")
	}
	fmt.Fprintf(&b, `// %[1]sAll iterates over every item %[1]s returns, fetching each next page (the
// previous answer's next_page) as the loop reaches it. An error ends the loop: it is
// yielded with a nil item.
func (c *Client) %[1]sAll(%[2]s) iter.Seq2[*%[3]s, error] {
%[6]s	return pageAll(func(page string) ([]%[3]s, string, error) {
		var p %[4]s
		if params != nil {
			p = *params
		}
		if page != "" {
			p.Page = page
		}
		res, err := c.%[1]s(%[5]s)
		if err != nil {
			return nil, "", err
		}
		if res.NextPage == nil {
			return res.Data, "", nil
		}
		return res.Data, *res.NextPage, nil
	})
}
`, m.Name, strings.Join(args, ", "), m.PageItem, m.Params, strings.Join(call, ", "), nilCheck)
	return b.String()
}
