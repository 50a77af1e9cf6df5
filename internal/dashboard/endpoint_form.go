package dashboard

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
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
	Ordering                 string // none or object (CONTRACT §26)
	// RateLimit and RatePeriod are the pace (CONTRACT §27): "" and "1s" when unpaced.
	RateLimit, RatePeriod string
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
	f.Ordering = webhook.OrderingOf(ep)
	f.RateLimit, f.RatePeriod = "", models.RatePerSecond
	if ep.RateLimit > 0 {
		f.RateLimit, f.RatePeriod = strconv.Itoa(ep.RateLimit), ep.RatePeriod
	}
	return f
}

func (f *endpointForm) setPolicy(r models.RetryPolicy) {
	f.InitialInterval = webhook.FormatDuration(r.InitialInterval())
	f.BackoffCoefficient = strconv.FormatFloat(r.BackoffCoefficient, 'f', -1, 64)
	f.MaximumInterval = webhook.FormatDuration(r.MaximumInterval())
	f.MaximumAttempts = strconv.Itoa(r.MaximumAttempts)
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
	ep, err := webhook.GetEndpoint(c.Request.Context(), h.store, env, c.Param("id"))
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
	f.Ordering = models.OrderingNone
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
		"filter": "filter", "signing": "signing", "ordering": "ordering"}[param]
	if field == "" {
		h.showEndpoint(c, http.StatusBadRequest, d, "", "The endpoint was not saved. "+msg)
		return
	}
	d.FieldErrors = map[string]string{field: msg}
	h.showEndpoint(c, http.StatusBadRequest, d, "", "The endpoint was not saved: correct the fields below.")
}
