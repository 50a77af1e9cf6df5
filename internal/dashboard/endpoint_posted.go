package dashboard

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/bodyfields"
)

// What the endpoint form posts, read into the webhook domain's fields, and the faults the
// domain finds, put back beside the fields they concern.

// postedForm reads the form as typed (made printable, so a refused field can be shown
// again without carrying what was refused); header values are not shown again (saved
// lists the endpoint's header names).
func postedForm(c *gin.Context, saved []string) endpointForm {
	f := endpointForm{
		URL: printable(c.PostForm("url")), Method: printable(c.PostForm("method")),
		Description: printable(c.PostForm("description")), Enabled: c.PostForm("enabled") == "on",
		EventTypes:         map[string]bool{},
		InitialInterval:    printable(c.PostForm("initial_interval")),
		BackoffCoefficient: printable(c.PostForm("backoff_coefficient")),
		MaximumInterval:    printable(c.PostForm("maximum_interval")),
		MaximumAttempts:    printable(c.PostForm("maximum_attempts")),
		// Free text (newlines kept); the guard let only valid UTF-8 without NUL through,
		// and the template escapes it.
		Filter:     c.PostForm("filter"),
		FilterType: printable(c.PostForm("filter_type")),
		Signing:    printable(c.PostForm("signing")),
		Ordering:   printable(c.PostForm("ordering")),
		RateLimit:  printable(c.PostForm("rate_limit")),
		RatePeriod: printable(c.PostForm("rate_period")),
	}
	for _, t := range c.PostFormArray("event_types") {
		f.EventTypes[printable(t)] = true
	}
	var names []string
	var typed []bool
	values := c.PostFormArray("header_value")
	for i, n := range c.PostFormArray("header_name") {
		if n != "" {
			names = append(names, n)
			typed = append(typed, i < len(values) && values[i] != "")
		}
	}
	names = names[:min(len(names), webhook.MaxHeaders)]
	f.Headers = headerRows(names, saved)
	for i := range names {
		f.Headers[i].Retype = typed[i]
	}
	return f
}

// fields turns the posted form into the API's input, so the form is judged by the same
// rules (webhook.ValidateEndpointFields) as POST/PATCH /v1/webhook_endpoints. Only what
// a form cannot say in JSON's terms is checked here: numbers that are not numbers, a
// header value without a name. saved are the endpoint's header names (none on create).
func fields(c *gin.Context, saved []string) (webhook.EndpointFields, map[string]string) {
	u, m, desc := c.PostForm("url"), c.PostForm("method"), c.PostForm("description")
	on := c.PostForm("enabled") == "on"
	types := c.PostFormArray("event_types")
	if types == nil {
		types = []string{} // no box ticked: refused by the rules, not taken as "unchanged"
	}
	in := webhook.EndpointFields{URL: &u, Method: &m, Description: &desc, EventTypes: &types, Enabled: &on,
		RetryPolicy: &webhook.RetryPolicyInput{}}
	faults := map[string]string{}
	initial, maximum := c.PostForm("initial_interval"), c.PostForm("maximum_interval")
	in.RetryPolicy.InitialInterval, in.RetryPolicy.MaximumInterval = &initial, &maximum
	if s := strings.TrimSpace(c.PostForm("backoff_coefficient")); s != "" {
		if v, err := strconv.ParseFloat(s, 64); err != nil {
			faults["retry_policy.backoff_coefficient"] = "retry_policy.backoff_coefficient must be a number such as 1 or 2.5."
		} else {
			in.RetryPolicy.BackoffCoefficient = &v
		}
	}
	if s := strings.TrimSpace(c.PostForm("maximum_attempts")); s != "" {
		if v, err := strconv.Atoi(s); err != nil {
			faults["retry_policy.maximum_attempts"] = "retry_policy.maximum_attempts must be a whole number."
		} else {
			in.RetryPolicy.MaximumAttempts = &v
		}
	}
	// The API's signing member: on edit, another scheme makes a new key of it and the
	// old key keeps signing 24 h (a rotation). A form without the field changes nothing.
	if s, ok := c.GetPostForm("signing"); ok {
		in.Signing = &s
	}
	// The API's ordering member (CONTRACT §26); a form without the field changes nothing.
	if s, ok := c.GetPostForm("ordering"); ok {
		in.Ordering = &s
	}
	in.RateLimit = formRateLimit(c, faults)
	in.Filter = formFilter(c.PostForm("filter"), faults)
	in.Headers = headerFields(c, saved, faults)
	return in, faults
}

// headerFields are the form's header rows as a headers member: a row with a value sets
// it; a saved name with an empty value keeps it; a saved name no row names any more is
// removed (clearing a name removes its header).
func headerFields(c *gin.Context, saved []string, faults map[string]string) bodyfields.Field[map[string]webhook.HeaderValue] {
	names, values := c.PostFormArray("header_name"), c.PostFormArray("header_value")
	headers := map[string]webhook.HeaderValue{}
	var posted []string
	for i, name := range names {
		value := ""
		if i < len(values) {
			value = values[i]
		}
		switch {
		case name == "" && value != "":
			faults["headers"] = "A header value needs a name."
		case name == "":
		case value == "" && hasName(saved, name):
			posted = append(posted, name)
		default:
			posted = append(posted, name)
			headers[name] = webhook.HeaderString(value)
		}
	}
	for _, name := range saved {
		if !hasName(posted, name) {
			headers[name] = webhook.HeaderNull()
		}
	}
	return bodyfields.Of(headers)
}

// formParam is the form field a validation fault's param belongs to.
func formParam(param string) string {
	if strings.HasPrefix(param, "event_types[") {
		return "event_types"
	}
	if strings.HasPrefix(param, "filter/") || strings.HasPrefix(param, "filter.") {
		return "filter" // the message names the JSON Pointer
	}
	if strings.HasPrefix(param, "headers") {
		return "headers"
	}
	return param
}

// fieldErrors turns validation and url_not_allowed errors into messages per param; nil
// when err is not a client mistake about the fields.
func fieldErrors(err error) map[string]string {
	var (
		verr *apperr.ValidationError
		ierr *apperr.InvalidError
	)
	switch {
	case errors.As(err, &verr):
		m := map[string]string{}
		for _, f := range verr.Faults {
			if _, ok := m[f.Param]; !ok {
				m[f.Param] = f.Message
			}
		}
		return m
	case errors.As(err, &ierr) && ierr.Param != "":
		return map[string]string{ierr.Param: ierr.Message}
	}
	return nil
}

// formRateLimit is the form's pace as a rate_limit member (CONTRACT §27): an empty limit
// is null (unpaced); a form without the field changes nothing.
func formRateLimit(c *gin.Context, faults map[string]string) *json.RawMessage {
	limit, ok := c.GetPostForm("rate_limit")
	if !ok {
		return nil
	}
	raw := json.RawMessage("null")
	if limit = strings.TrimSpace(limit); limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil {
			faults["rate_limit.limit"] = "rate_limit.limit must be a whole number from 1 to 1000, or empty for no pace."
			return nil
		}
		raw, _ = json.Marshal(map[string]any{"limit": n, "period": c.PostForm("rate_period")})
	}
	return &raw
}
