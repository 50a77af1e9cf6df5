package api

import (
	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/httperr"
	"github.com/revops/revops/internal/domain/accounts"
	"github.com/revops/revops/internal/domain/deals"
)

// routes registers every route of the API, /v1 in the order of the CONTRACT's sections.
// It builds nothing: New builds the Server's parts (limiter, OpenAPI document) before it
// is called. The dashboard's routes, under /dashboard (§11), are mounted by internal/app.
//
// Middleware order is CONTRACT §3's: HTTPS and authentication on every request (New),
// then routing (404/405), key type, rate limit, path ids and the idempotency claim;
// content type, size and JSON are checked by each handler's decoding.
func (s *Server) routes(r *gin.Engine) {
	r.NoRoute(func(c *gin.Context) {
		fail(c, httperr.NoRoute(c.Request.Method, c.Request.URL.Path))
	})
	r.NoMethod(func(c *gin.Context) {
		fail(c, httperr.NoMethod(c.Request.Method, c.Request.URL.Path))
	})
	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)

	// Any valid key, public ones included (§2).
	anyKey := r.Group("/v1", s.limiter.handle)
	anyKey.GET("/whoami", s.whoami)            // §2
	anyKey.GET("/openapi.json", s.openapiJSON) // §9

	// Every other route needs a secret key (§2).
	s.secretRoutes(r.Group("/v1", requireSecret, s.limiter.handle, pathIDs, s.idempotent))
}

// secretRoutes registers the routes that need a secret key (§2), by section, on the
// group whose middleware routes says.
func (s *Server) secretRoutes(v1 *gin.RouterGroup) {
	// §5 Usage events.
	v1.POST("/usage/events", s.ingestUsage)
	v1.GET("/usage/events", s.listUsageEvents)
	v1.GET("/usage/summary", s.usageSummary)

	// §6 Accounts.
	v1.POST("/accounts", s.createAccount)
	v1.GET("/accounts", s.listAccounts)
	v1.GET("/accounts/:id", s.getAccount)
	v1.PATCH("/accounts/:id", s.updateAccount)
	v1.DELETE("/accounts/:id", s.accountAction(accounts.Deprovision))
	v1.POST("/accounts/:id/activate", s.accountAction(accounts.Activate))

	// §7 Deals.
	v1.POST("/deals", s.createDeal)
	v1.GET("/deals", s.listDeals)
	v1.GET("/deals/:id", s.getDeal)
	v1.PATCH("/deals/:id", s.updateDeal)
	v1.POST("/deals/:id/submit", s.dealAction(deals.ActionSubmit))
	v1.POST("/deals/:id/approve", s.dealAction(deals.ActionApprove))
	v1.POST("/deals/:id/sign", s.dealAction(deals.ActionSign))
	v1.POST("/deals/:id/activate", s.dealAction(deals.ActionActivate))
	v1.POST("/deals/:id/void", s.dealAction(deals.ActionVoid))

	// §8 The webhook endpoint: the environment's oldest endpoint of §13.
	v1.GET("/webhook_endpoint", s.getWebhookEndpoint)
	v1.PUT("/webhook_endpoint", s.putWebhookEndpoint)
	v1.GET("/webhook_endpoint/secret", endpointSecret(s.oldestEndpoint))
	v1.POST("/webhook_endpoint/rotate_secret", rotateSecret(s.rotateOldest))
	v1.POST("/webhook_endpoint/test", s.testWebhookEndpoint)

	// §9 Events and replay (bulk replay jobs: §16).
	v1.GET("/events", s.listEvents)
	v1.GET("/events/:id", s.getEvent)
	v1.POST("/events/:id/replay", s.replayEvent)
	v1.POST("/events/replay", s.replayEvents)
	v1.GET("/events/replay/:id", s.getReplayJob)

	// §13 Webhook endpoints, many per environment, and the event type catalog.
	v1.POST("/webhook_endpoints", s.createEndpoint)
	v1.GET("/webhook_endpoints", s.listEndpoints)
	v1.POST("/webhook_endpoints/filter_test", s.testEndpointFilter) // §25; before the /:id routes
	v1.GET("/webhook_endpoints/:id", s.getEndpoint)
	v1.PATCH("/webhook_endpoints/:id", s.updateEndpoint)
	v1.DELETE("/webhook_endpoints/:id", s.deleteEndpoint)
	v1.GET("/webhook_endpoints/:id/secret", endpointSecret(s.endpointByID))
	v1.POST("/webhook_endpoints/:id/rotate_secret", rotateSecret(s.rotateByID))
	v1.POST("/webhook_endpoints/:id/test", s.testEndpoint)
	v1.GET("/webhook_endpoints/:id/stats", s.endpointStats)
	v1.GET("/event_types", s.listEventTypes)

	// §18 Usage meters, addressed by key.
	v1.POST("/meters", s.createMeter)
	v1.GET("/meters", s.listMeters)
	v1.GET("/meters/:key", s.getMeter)
	v1.PATCH("/meters/:key", s.updateMeter)
	v1.DELETE("/meters/:key", s.deleteMeter)
	v1.GET("/meters/:key/values", s.meterValues)

	// §24 Usage alerts, under their meter.
	v1.POST("/meters/:key/alerts", s.createMeterAlert)
	v1.GET("/meters/:key/alerts", s.listMeterAlerts)
	v1.GET("/meters/:key/alerts/:id", s.getMeterAlert)
	v1.DELETE("/meters/:key/alerts/:id", s.deleteMeterAlert)
}
