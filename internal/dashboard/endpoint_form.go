package dashboard

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/models"
)

// endpointForm is what the add/edit form shows: the saved values or the ones just typed.
type endpointForm struct {
	URL, Method, Description string
	EventTypes               map[string]bool
	Enabled                  bool
	InitialInterval          string
	BackoffCoefficient       string
	MaximumInterval          string
	MaximumAttempts          string
	Filter                   string // JSON as typed, or the saved filter indented ("" = none)
	FilterType               string // the event type whose sample "Test filter" uses
	Headers                  []headerRow
	Signing                  string // hmac-sha256 or ed25519: the saved key's scheme, or as chosen
}

// headerRow is one name/value row of the form's custom headers (CONTRACT §25). A value is
// never shown: a saved header shows "<redacted>" as the value's placeholder, and an empty
// value keeps what is saved. Retype marks a row of a form shown again whose value was
// typed: it is not carried back, so the row asks for it (else the next save would keep a
// saved header's old value without a word).
type headerRow struct {
	Name   string
	Saved  bool
	Retype bool
}

// headerRows are the rows of the saved names, then up to two empty ones for new headers.
func headerRows(names, saved []string) []headerRow {
	rows := make([]headerRow, 0, len(names)+2)
	for _, n := range names {
		rows = append(rows, headerRow{Name: printable(n), Saved: hasName(saved, n)})
	}
	for i := 0; i < 2 && len(rows) < webhook.MaxHeaders; i++ {
		rows = append(rows, headerRow{})
	}
	return rows
}

func hasName(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// endpointData is the page of one endpoint: its form, and once it exists its secret,
// test sender and delete link.
type endpointData struct {
	ID             string   // "" on the add form
	SavedHeaders   []string // the names of the endpoint's custom headers
	Form           endpointForm
	FieldErrors    map[string]string // form field → message, shown under the field
	Choices        []subscriptionChoice
	DisabledReason string
	FailingSince   *time.Time
	Warnings       []webhook.Warning // the saved endpoint's (credentials in its URL)
	Secret         string            // set only when revealed or just rotated
	PublicKey      string            // an ed25519 endpoint's whpk_ key, always shown (it has no secret to reveal)
	PreviousUntil  *time.Time
	TestTypes      []string
	TestType       string
	Test           *webhook.TestResult
	FilterTest     *filterTestResult
	AckSentence    string
}

// retryFieldArgs are the arguments of one retry-policy input of the form template.
func retryFieldArgs(d endpointData, name, label, value, placeholder string) map[string]string {
	return map[string]string{"Name": name, "Label": label, "Value": value, "Placeholder": placeholder,
		"Error": d.FieldErrors["retry_policy."+name]}
}

func formOf(ep models.WebhookEndpoint) endpointForm {
	f := endpointForm{URL: ep.URL, Method: ep.Method, Description: ep.Description, Enabled: ep.Enabled,
		EventTypes: map[string]bool{}}
	for _, t := range ep.EventTypes {
		f.EventTypes[t] = true
	}
	names := webhook.HeaderNames(ep.Headers)
	slices.Sort(names)
	f.Headers = headerRows(names, names)
	f.setPolicy(ep.RetryPolicy)
	f.Filter = indentFilter(ep.Filter)
	f.Signing = signing.Scheme(ep.Secret)
	return f
}

func (f *endpointForm) setPolicy(r models.RetryPolicy) {
	f.InitialInterval = webhook.FormatDuration(r.InitialInterval())
	f.BackoffCoefficient = strconv.FormatFloat(r.BackoffCoefficient, 'f', -1, 64)
	f.MaximumInterval = webhook.FormatDuration(r.MaximumInterval())
	f.MaximumAttempts = strconv.Itoa(r.MaximumAttempts)
}

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

func (h *handler) endpointChoices(d *endpointData) {
	d.Choices, d.TestTypes, d.AckSentence = subscriptionChoices(), webhook.EventTypes, h.cfg.AckSentence()
	if d.TestType == "" {
		d.TestType = "deal-signed"
	}
	if d.Form.FilterType == "" {
		d.Form.FilterType = "deal-signed"
	}
}

func (h *handler) showEndpoint(c *gin.Context, status int, d endpointData, notice, msg string) {
	h.endpointChoices(&d)
	title := "Add a webhook endpoint"
	if d.ID != "" {
		title = "Webhook endpoint"
	}
	h.render(c, status, "endpoint", view{Title: title, Nav: "webhooks", Notice: notice, Error: msg, Data: d})
}

// endpointView loads the endpoint of the path and prepares its page.
func (h *handler) endpointView(c *gin.Context) (endpointData, models.WebhookEndpoint, error) {
	env, err := h.env(c)
	if err != nil {
		return endpointData{}, models.WebhookEndpoint{}, err
	}
	ep, err := h.endpoints.Get(c.Request.Context(), env, c.Param("id"))
	if err != nil {
		return endpointData{}, ep, err
	}
	return h.endpointPage(ep), ep, nil
}

// endpointPage prepares the page of a loaded endpoint.
func (h *handler) endpointPage(ep models.WebhookEndpoint) endpointData {
	d := endpointData{ID: ep.ID, Form: formOf(ep), DisabledReason: ep.DisabledReason, FailingSince: ep.FailingSince,
		SavedHeaders: webhook.HeaderNames(ep.Headers), Warnings: webhook.Warnings(ep)}
	if pub := webhook.ToEndpointObject(ep).PublicKey; pub != nil {
		d.PublicKey = *pub
	}
	if ep.PreviousUntil != nil && h.now().Before(*ep.PreviousUntil) {
		d.PreviousUntil = ep.PreviousUntil
	}
	return d
}

func (h *handler) newEndpoint(c *gin.Context) {
	f := endpointForm{Method: http.MethodPost, Enabled: true, EventTypes: map[string]bool{catalog.Wildcard: true}}
	f.setPolicy(models.DefaultRetryPolicy)
	f.Headers = headerRows(nil, nil)
	f.Signing = signing.SchemeHMAC
	h.showEndpoint(c, http.StatusOK, endpointData{Form: f}, "", "")
}

var endpointNotices = map[string]string{
	"created": "Endpoint added. A signing secret was made for it: reveal it below to verify signatures.",
	"saved":   "Endpoint saved.",
	// The endpoint signs with ed25519: nothing to reveal, its public key is on the page.
	"created_ed25519": "Endpoint added. A key pair was made for it: receivers verify its signatures with the public key below.",
	"rekeyed":         "Endpoint saved. A key of the new signing scheme was made; the previous key still signs for 24 hours.",
}

func (h *handler) editEndpoint(c *gin.Context) {
	d, _, err := h.endpointView(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.showEndpoint(c, http.StatusOK, d, endpointNotices[c.Query("notice")], "")
}

func (h *handler) createEndpoint(c *gin.Context) {
	h.saveEndpoint(c, endpointData{})
}

func (h *handler) updateEndpoint(c *gin.Context) {
	d, _, err := h.endpointView(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.saveEndpoint(c, d)
}

// saveEndpoint creates (d.ID "") or updates the endpoint from the posted form; a refused
// form comes back as typed with a message under each faulty field, and nothing is saved.
func (h *handler) saveEndpoint(c *gin.Context, d endpointData) {
	if c.PostForm("intent") == "test_filter" {
		h.testFormFilter(c, d)
		return
	}
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	in, faults := fields(c, d.SavedHeaders)
	var ep models.WebhookEndpoint
	if len(faults) > 0 {
		// Not saved: only list the other fields' faults too, with the same rules.
		_, err = webhook.ValidateEndpointFields(in, d.ID == "", models.DefaultRetryPolicy, d.Form.URL) // d: as saved
	} else if d.ID == "" {
		ep, err = h.endpoints.Create(c.Request.Context(), env, in, idempotency.Reply[webhook.EndpointObject]{})
	} else {
		ep, err = h.endpoints.Update(c.Request.Context(), env, d.ID, in, idempotency.Reply[webhook.EndpointObject]{})
	}
	for param, msg := range fieldErrors(err) {
		if _, ok := faults[formParam(param)]; !ok {
			faults[formParam(param)] = msg
		}
	}
	if len(faults) > 0 {
		d.Form, d.FieldErrors = postedForm(c, d.SavedHeaders), faults
		h.showEndpoint(c, http.StatusBadRequest, d, "", "The endpoint was not saved: correct the fields below.")
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	notice := "saved"
	switch {
	case d.ID == "" && signing.Scheme(ep.Secret) == signing.SchemeEd25519:
		notice = "created_ed25519"
	case d.ID == "":
		notice = "created"
	case signing.Scheme(ep.Secret) != d.Form.Signing: // d is the endpoint as it was
		notice = "rekeyed"
	}
	c.Redirect(http.StatusSeeOther, endpointPath(ep.ID)+"?notice="+notice)
}

// showEndpointFault shows the add or edit form again as typed, with msg under field
// param: a field the input check of every request refused (guard.go).
func (h *handler) showEndpointFault(c *gin.Context, param, msg string) {
	d := endpointData{}
	if c.Param("id") != "" {
		var err error
		if d, _, err = h.endpointView(c); err != nil {
			h.fail(c, err)
			return
		}
	}
	d.Form = postedForm(c, d.SavedHeaders)
	field := map[string]string{"url": "url", "method": "method", "description": "description", "event_types": "event_types",
		"initial_interval": "retry_policy.initial_interval", "maximum_interval": "retry_policy.maximum_interval",
		"backoff_coefficient": "retry_policy.backoff_coefficient", "maximum_attempts": "retry_policy.maximum_attempts",
		"filter": "filter", "signing": "signing"}[param]
	if field == "" {
		h.showEndpoint(c, http.StatusBadRequest, d, "", "The endpoint was not saved. "+msg)
		return
	}
	d.FieldErrors = map[string]string{field: msg}
	h.showEndpoint(c, http.StatusBadRequest, d, "", "The endpoint was not saved: correct the fields below.")
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
