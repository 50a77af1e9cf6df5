package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/models"
)

// webhookEndpointsFields are the members a POST or PATCH of /v1/webhook_endpoints may
// carry (CONTRACT §13).
var webhookEndpointsFields = fieldRules{
	Writable: []string{"url", "method", "description", "event_types", "enabled", "retry_policy", "signing", "filter", "headers", "ordering", "rate_limit"},
	ReadOnly: []string{"id", "object", "status", "disabled_reason", "health", "secret", "public_key", "created_at", "updated_at"},
	Nested: map[string]fieldRules{"retry_policy": {
		Writable: []string{"initial_interval", "backoff_coefficient", "maximum_interval", "maximum_attempts"},
	}, "rate_limit": {Writable: []string{"limit", "period"}}},
}

// webhookEndpointsRequest is the body of POST and PATCH /v1/webhook_endpoints and, within
// webhookEndpointFields, of PUT /v1/webhook_endpoint.
type webhookEndpointsRequest struct {
	URL         *string                           `json:"url"`
	Method      *string                           `json:"method"`
	Description bodyfields.Field[string]          `json:"description"` // null clears it, as "" does
	EventTypes  *[]string                         `json:"event_types"`
	Enabled     *bool                             `json:"enabled"`
	RetryPolicy *webhook.RetryPolicyInput         `json:"retry_policy"`
	Signing     *string                           `json:"signing"`
	Ordering    *string                           `json:"ordering"` // none or object (CONTRACT §26)
	Filter      bodyfields.Field[json.RawMessage] `json:"filter"`   // null or {} removes it (CONTRACT §25)
	// Headers: a null value removes one; null removes them all (CONTRACT §25).
	Headers bodyfields.Field[map[string]webhook.HeaderValue] `json:"headers"`
	// RateLimit: null unpaces (CONTRACT §27); checked by the domain, member by member.
	RateLimit bodyfields.Field[json.RawMessage] `json:"rate_limit"`
}

func (r webhookEndpointsRequest) fields() webhook.EndpointFields {
	var description *string
	if r.Description.Set {
		description = &r.Description.Value // "" when null
	}
	var filter *json.RawMessage
	if r.Filter.Set {
		f := r.Filter.Value // nil when null: no filter
		filter = &f
	}
	var rateLimit *json.RawMessage
	if r.RateLimit.Set {
		raw := r.RateLimit.Value // nil when null: unpaced
		rateLimit = &raw
	}
	return webhook.EndpointFields{URL: r.URL, Method: r.Method, Description: description,
		EventTypes: r.EventTypes, Enabled: r.Enabled, RetryPolicy: r.RetryPolicy, Signing: r.Signing, Filter: filter, Headers: r.Headers,
		Ordering: r.Ordering, RateLimit: rateLimit}
}

func (s *Server) createEndpoint(c *gin.Context) {
	var in webhookEndpointsRequest
	if err := bindObject(c, webhookEndpointsFields, &in); err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[webhook.EndpointObject](c, http.StatusCreated)
	ep, err := s.endpoints.Create(c.Request.Context(), principal(c).Env, in.fields(), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, reply.Status(), webhook.WithHeadersShown(webhook.ToEndpointWithSecret(ep), ep, webhook.SetHeaderNames(in.Headers.Value)))
}

func (s *Server) listEndpoints(c *gin.Context) {
	page, err := pageParams(c)
	if err != nil {
		fail(c, err)
		return
	}
	eps, more, err := webhook.ListEndpoints(c.Request.Context(), s.store, principal(c).Env, page)
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]webhook.EndpointObject, len(eps))
	for i, ep := range eps {
		out[i] = webhook.ToEndpointObject(ep)
	}
	render(c, http.StatusOK, newList(out, more))
}

func (s *Server) getEndpoint(c *gin.Context) {
	ep, err := s.endpointByID(c)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, webhook.ToEndpointObject(ep))
}

func (s *Server) updateEndpoint(c *gin.Context) {
	var in webhookEndpointsRequest
	if err := bindObject(c, webhookEndpointsFields, &in); err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[webhook.EndpointObject](c, http.StatusOK)
	ep, err := s.endpoints.Update(c.Request.Context(), principal(c).Env, c.Param("id"), in.fields(), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, reply.Status(), webhook.WithHeadersShown(webhook.ToEndpointObject(ep), ep, webhook.SetHeaderNames(in.Headers.Value)))
}

func (s *Server) deleteEndpoint(c *gin.Context) {
	if err := bindNoParams(c); err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[webhook.DeletedEndpoint](c, http.StatusOK)
	ep, err := webhook.DeleteEndpoint(c.Request.Context(), s.store, principal(c).Env, c.Param("id"), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, reply.Status(), webhook.ToDeletedEndpoint(ep))
}

// endpointByID finds the endpoint §13's routes act on: the path's.
func (s *Server) endpointByID(c *gin.Context) (models.WebhookEndpoint, error) {
	return webhook.GetEndpoint(c.Request.Context(), s.store, principal(c).Env, c.Param("id"))
}

// rotateByID rotates the path's endpoint's key.
func (s *Server) rotateByID(c *gin.Context, now time.Time, reply idempotency.Reply[webhook.SecretObject]) (models.WebhookEndpoint, error) {
	return webhook.RotateKey(c.Request.Context(), s.store, principal(c).Env, c.Param("id"), now, webhook.RotationOverlap, reply)
}

// endpointSecret answers GET …/secret (CONTRACT §8, §13) for the endpoint find finds:
// endpointByID or oldestEndpoint.
func endpointSecret(find func(c *gin.Context) (models.WebhookEndpoint, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		ep, err := find(c)
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
}

// rotateSecret answers POST …/rotate_secret (CONTRACT §8, §13) by rotate: rotateByID or
// rotateOldest.
func rotateSecret(rotate func(c *gin.Context, now time.Time, reply idempotency.Reply[webhook.SecretObject]) (models.WebhookEndpoint, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := bindNoParams(c); err != nil {
			fail(c, err)
			return
		}
		reply := replyAs[webhook.SecretObject](c, http.StatusOK)
		ep, err := rotate(c, time.Now().UTC(), reply)
		if err != nil {
			fail(c, err)
			return
		}
		render(c, reply.Status(), webhook.ToSecretObject(ep))
	}
}

func (s *Server) testEndpoint(c *gin.Context) {
	var in webhookTestRequest
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	res, err := s.endpoints.Test(c.Request.Context(), principal(c).Env, c.Param("id"), in.Type)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, toWebhookTest(res))
}

// filterTestRequest is the body of POST /v1/webhook_endpoints/filter_test (CONTRACT §25).
type filterTestRequest struct {
	Filter  *json.RawMessage `json:"filter"`
	Payload *json.RawMessage `json:"payload"`
	EventID *string          `json:"event_id"`
}

// filterTestResponse tells whether the filter takes the payload.
type filterTestResponse struct {
	Match bool `json:"match"`
}

func (s *Server) testEndpointFilter(c *gin.Context) {
	var in filterTestRequest
	if err := bindJSON(c, &in); err != nil {
		fail(c, err)
		return
	}
	match, err := s.endpoints.TestFilter(c.Request.Context(), principal(c).Env,
		webhook.FilterTestInput{Filter: in.Filter, Payload: in.Payload, EventID: in.EventID})
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, filterTestResponse{Match: match})
}
