package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/webhook"
	"github.com/revops/revops/models"
)

func (h *handler) webhookRoutes(g *gin.RouterGroup) {
	g.GET("/webhooks", h.webhookPage)
	g.POST("/webhooks", h.saveWebhook)
	g.POST("/webhooks/secret/reveal", h.revealSecret)
	g.POST("/webhooks/secret/rotate", h.rotateSecret)
	g.POST("/webhooks/test", h.testWebhook)
}

// newWebhookSettings builds the same settings service the API uses, with its own client
// (SSRF-guarded, trusting REVOPS_WEBHOOK_CA_FILE).
func newWebhookSettings(d Deps) *webhook.Settings {
	client, err := webhook.NewClient(d.Config.WebhookAllowPrivate, d.Config.WebhookCAFile)
	if err != nil {
		if d.Log != nil {
			d.Log.Error("dashboard webhook client without the extra CA", "err", err)
		}
		client, _ = webhook.NewClient(d.Config.WebhookAllowPrivate, "")
	}
	return &webhook.Settings{
		Store:        d.Store,
		Sender:       &webhook.Sender{Client: client, AckSentence: d.Config.AckSentence()},
		AllowPrivate: d.Config.WebhookAllowPrivate,
	}
}

// webhookForm is what the settings form shows: the saved values or the ones just typed.
type webhookForm struct {
	URL     string
	Method  string
	Enabled bool
}

// webhookData is the Webhook settings page.
type webhookData struct {
	Exists        bool
	Form          webhookForm
	FieldErrors   map[string]string // param → message, shown under the field
	Secret        string            // set only when revealed or just rotated
	PreviousUntil *time.Time
	EventTypes    []string
	TestType      string
	Test          *webhook.TestResult
	AckSentence   string
}

// webhookView loads the endpoint and prepares the page; the caller adds what it did.
func (h *handler) webhookView(c *gin.Context) (webhookData, models.WebhookEndpoint, error) {
	d := webhookData{EventTypes: webhook.EventTypes, TestType: "deal-signed", AckSentence: h.cfg.AckSentence(),
		Form: webhookForm{Method: http.MethodPost, Enabled: true}}
	env, err := h.env(c)
	if err != nil {
		return d, models.WebhookEndpoint{}, err
	}
	ep, err := h.webhooks.Get(c.Request.Context(), env)
	if errors.Is(err, apperr.ErrNotFound) {
		return d, ep, nil
	}
	if err != nil {
		return d, ep, err
	}
	d.Exists, d.Form = true, webhookForm{URL: ep.URL, Method: ep.Method, Enabled: ep.Enabled}
	if ep.PreviousUntil != nil && h.now().Before(*ep.PreviousUntil) {
		d.PreviousUntil = ep.PreviousUntil
	}
	return d, ep, nil
}

func (h *handler) showWebhooks(c *gin.Context, status int, d webhookData, notice, msg string) {
	h.render(c, status, "webhooks", view{Title: "Webhook settings", Nav: "webhooks", Notice: notice, Error: msg, Data: d})
}

func (h *handler) webhookPage(c *gin.Context) {
	d, _, err := h.webhookView(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	h.showWebhooks(c, http.StatusOK, d, "", "")
}

func (h *handler) saveWebhook(c *gin.Context) {
	d, _, err := h.webhookView(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Form = webhookForm{URL: c.PostForm("url"), Method: c.PostForm("method"), Enabled: c.PostForm("enabled") == "on"}
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	_, created, err := h.webhooks.Put(c.Request.Context(), env,
		webhook.EndpointInput{URL: &d.Form.URL, Method: &d.Form.Method, Enabled: &d.Form.Enabled})
	if fields := fieldErrors(err); fields != nil {
		d.FieldErrors = fields
		h.showWebhooks(c, http.StatusBadRequest, d, "", "The settings were not saved: correct the fields below.")
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	notice := "Webhook settings saved."
	if created {
		notice = "Webhook settings saved. A signing secret was made for this endpoint: reveal it below to verify signatures."
	}
	d.Exists = true
	h.showWebhooks(c, http.StatusOK, d, notice, "")
}

// showWebhookFault shows the settings form again as typed, with msg under field param.
func (h *handler) showWebhookFault(c *gin.Context, param, msg string) {
	d, _, err := h.webhookView(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Form = webhookForm{URL: printable(c.PostForm("url")), Method: printable(c.PostForm("method")), Enabled: c.PostForm("enabled") == "on"}
	if param != "url" && param != "method" {
		h.showWebhooks(c, http.StatusBadRequest, d, "", "The settings were not saved. "+msg)
		return
	}
	d.FieldErrors = map[string]string{param: msg}
	h.showWebhooks(c, http.StatusBadRequest, d, "", "The settings were not saved: correct the fields below.")
}

// fieldErrors turns validation and url_not_allowed errors into messages per field;
// nil when err is not a client mistake about the fields.
func fieldErrors(err error) map[string]string {
	var (
		verr *apperr.ValidationError
		rerr *apperr.RequestError
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
	case errors.As(err, &rerr) && rerr.Param != "":
		return map[string]string{rerr.Param: rerr.Message}
	}
	return nil
}

func (h *handler) revealSecret(c *gin.Context) {
	d, ep, err := h.webhookView(c)
	if err == nil && !d.Exists {
		err = fmt.Errorf("webhook endpoint: %w", apperr.ErrNotFound)
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Secret = ep.Secret
	h.showWebhooks(c, http.StatusOK, d, "", "")
}

func (h *handler) rotateSecret(c *gin.Context) {
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	ep, err := h.webhooks.Rotate(c.Request.Context(), env)
	if err != nil {
		h.fail(c, err)
		return
	}
	d, _, err := h.webhookView(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Secret = ep.Secret
	h.showWebhooks(c, http.StatusOK, d, fmt.Sprintf(
		"New signing secret made. The previous one still signs until %s.", ep.PreviousUntil.UTC().Format("2006-01-02 15:04 UTC")), "")
}

func (h *handler) testWebhook(c *gin.Context) {
	d, _, err := h.webhookView(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	if !d.Exists {
		h.showWebhooks(c, http.StatusBadRequest, d, "", "Save an endpoint URL before sending a test event.")
		return
	}
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	d.TestType = c.PostForm("type")
	res, err := h.webhooks.Test(c.Request.Context(), env, d.TestType)
	if fields := fieldErrors(err); fields != nil {
		h.showWebhooks(c, http.StatusBadRequest, d, "", "Choose an event type from the list.")
		return
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	d.Test = &res
	h.showWebhooks(c, http.StatusOK, d, "", "")
}
