package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

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
	ep, err := webhook.OldestEndpoint(c.Request.Context(), s.store, principal(c).Env)
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

func (s *Server) webhookEndpointSecret(c *gin.Context) {
	ep, err := webhook.OldestEndpoint(c.Request.Context(), s.store, principal(c).Env)
	if err != nil {
		fail(c, err)
		return
	}
	secret, err := webhook.ReadSecret(ep)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, secret)
}

func (s *Server) rotateWebhookSecret(c *gin.Context) {
	if err := bindNoParams(c); err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[webhook.SecretObject](c, http.StatusOK)
	ep, err := webhook.RotateOldest(c.Request.Context(), s.store, principal(c).Env, time.Now().UTC(), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, reply.Status(), webhook.ToSecretObject(ep))
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
