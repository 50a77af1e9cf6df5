package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// webhookEndpointFields are the members a PUT of the endpoint may carry (CONTRACT §8).
var webhookEndpointFields = fieldRules{
	Writable: []string{"url", "method", "enabled"},
	ReadOnly: []string{"object", "secret", "created_at", "updated_at"},
}

type webhookEndpointObject struct {
	Object    string `json:"object"`
	URL       string `json:"url"`
	Method    string `json:"method"`
	Enabled   bool   `json:"enabled"`
	Secret    string `json:"secret,omitempty"` // only in the answer of the first PUT
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

type webhookTestRequest struct {
	Type string `json:"type"`
}

type webhookTestResponse struct {
	OK              bool    `json:"ok"`
	StatusCode      *int    `json:"status_code"`
	DurationMS      int64   `json:"duration_ms"`
	ResponseExcerpt string  `json:"response_excerpt"`
	Error           *string `json:"error"`
}

func (s *Server) getWebhookEndpoint(c *gin.Context) {
	ep, err := s.oldestEndpoint(c)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, toWebhookEndpoint(ep, false))
}

func (s *Server) putWebhookEndpoint(c *gin.Context) {
	var in webhookEndpointsRequest // its url, method and enabled: the rules allow no other
	if err := bindObject(c, webhookEndpointFields, &in); err != nil {
		fail(c, err)
		return
	}
	ep, created, err := s.endpoints.Put(c.Request.Context(), principal(c).Env, in.fields())
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, toWebhookEndpoint(ep, created))
}

// oldestEndpoint finds the endpoint §8's singular routes act on: the oldest.
func (s *Server) oldestEndpoint(c *gin.Context) (models.WebhookEndpoint, error) {
	return webhook.OldestEndpoint(c.Request.Context(), s.store, principal(c).Env)
}

// rotateOldest rotates the oldest endpoint's key (webhook.RotateOldest: the next oldest
// if it is deleted meanwhile).
func (s *Server) rotateOldest(c *gin.Context, now time.Time, reply idempotency.Reply[webhook.SecretObject]) (models.WebhookEndpoint, error) {
	return webhook.RotateOldest(c.Request.Context(), s.store, principal(c).Env, now, reply)
}

func (s *Server) testWebhookEndpoint(c *gin.Context) {
	var in webhookTestRequest
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	res, err := s.endpoints.TestOldest(c.Request.Context(), principal(c).Env, in.Type)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, toWebhookTest(res))
}

func toWebhookEndpoint(ep models.WebhookEndpoint, withSecret bool) webhookEndpointObject {
	o := webhookEndpointObject{
		Object: "webhook_endpoint", URL: ep.URL, Method: ep.Method, Enabled: ep.Enabled,
		CreatedAt: ep.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: ep.UpdatedAt.UTC().Format(time.RFC3339),
	}
	if withSecret {
		o.Secret = ep.Secret
	}
	return o
}

func toWebhookTest(r webhook.TestResult) webhookTestResponse {
	o := webhookTestResponse{OK: r.OK, DurationMS: r.DurationMS, ResponseExcerpt: r.ResponseExcerpt}
	if r.StatusCode != 0 {
		o.StatusCode = &r.StatusCode
	}
	if r.Error != "" {
		o.Error = &r.Error
	}
	return o
}
