package dashboard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/webhook"
)

// The endpoint form's filter (CONTRACT §25): a textarea of JSON judged by the API's rules
// (webhook.ValidateEndpointFields), and "Test filter", which evaluates what is typed on
// the sample body of the chosen type (webhook.TestBody) without saving anything.

// filterTestResult is what "Test filter" shows under the filter.
type filterTestResult struct {
	Type  string // the sample's event type
	Match bool
	Fault string // why the filter cannot be evaluated ("" when it was)
}

// indentFilter shows a saved filter (compact JSON) over several lines.
func indentFilter(filter string) string {
	if filter == "" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(filter), "", "  "); err != nil {
		return filter
	}
	return b.String()
}

// formFilter is the filter textarea as the API's filter member: empty removes the filter
// (the form always sends it); text that is not JSON is a fault of the field.
func formFilter(text string, faults map[string]string) *json.RawMessage {
	raw := json.RawMessage("null")
	if strings.TrimSpace(text) == "" {
		return &raw
	}
	if !json.Valid([]byte(text)) {
		faults["filter"] = `filter must be a JSON object, such as {"deal.net_price": {"$gte": "1000"}}.`
		return nil
	}
	raw = json.RawMessage(text)
	return &raw
}

// testFormFilter evaluates the typed filter on the sample of the chosen type and shows
// the form again as typed, with the answer: match, no match, or the fault.
func (h *handler) testFormFilter(c *gin.Context, d endpointData) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Form = postedForm(c, d.SavedHeaders)
	res := filterTestResult{Type: d.Form.FilterType}
	sample, err := webhook.TestBody(c.PostForm("filter_type"))
	faults := map[string]string{}
	filter := formFilter(d.Form.Filter, faults)
	switch {
	case err != nil:
		res.Fault = "Choose an event type from the list."
	case faults["filter"] != "":
		res.Fault = faults["filter"]
	default:
		if string(*filter) == "null" {
			*filter = json.RawMessage("{}") // no filter: every event of the chosen types
		}
		payload := json.RawMessage(sample)
		res.Match, err = h.endpoints.TestFilter(c.Request.Context(), env, webhook.FilterTestInput{Filter: filter, Payload: &payload})
		if msgs := fieldErrors(err); msgs != nil {
			for _, m := range msgs {
				res.Fault = m
			}
		} else if err != nil {
			h.fail(c, err)
			return
		}
	}
	d.FilterTest = &res
	h.showEndpoint(c, http.StatusOK, d, "", "")
}
