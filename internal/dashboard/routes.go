package dashboard

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Routes mounts every page of the dashboard on r under /dashboard. It builds nothing but
// the static file server.
func (d *Dashboard) Routes(r gin.IRouter) {
	h := d.h
	g := r.Group("/dashboard", securityHeaders, h.readForm)
	g.GET("/static/*file", staticFiles())
	g.GET("/login", h.checkInput, h.loginForm)
	g.POST("/login", h.checkInput, h.login)

	// The session comes first so that strangers are sent to the login page whatever they
	// send, and the CSRF token before the input check so forged forms get no further.
	in := g.Group("", h.requireSession, h.checkCSRF, h.checkInput)
	in.GET("", func(c *gin.Context) { c.Redirect(http.StatusSeeOther, "/dashboard/api-keys") })
	in.POST("/logout", h.logout)
	in.POST("/environment", h.switchEnvironment)

	// API keys.
	in.GET("/api-keys", h.listKeys)
	in.POST("/api-keys", h.createKey)
	in.POST("/api-keys/:id/roll", h.rollKey)
	in.GET("/api-keys/:id/revoke", h.confirmRevoke)
	in.POST("/api-keys/:id/revoke", h.revokeKey)

	// Webhook endpoints (CONTRACT §13).
	in.GET("/webhooks", h.webhookPage)
	in.GET("/webhooks/new", h.newEndpoint)
	in.POST("/webhooks", h.createEndpoint)
	in.GET("/webhooks/:id", h.editEndpoint)
	in.POST("/webhooks/:id", h.updateEndpoint)
	in.POST("/webhooks/:id/enable", h.enableEndpoint)
	in.GET("/webhooks/:id/delete", h.confirmDeleteEndpoint)
	in.POST("/webhooks/:id/delete", h.deleteEndpoint)
	in.POST("/webhooks/:id/secret/reveal", h.revealSecret)
	in.POST("/webhooks/:id/secret/rotate", h.rotateSecret)
	in.POST("/webhooks/:id/test", h.testEndpoint)

	// Usage meters (CONTRACT §18), read only: meters are defined through the API.
	in.GET("/usage", h.usagePage)

	// Deliveries and their replays.
	in.GET("/deliveries", h.listDeliveries)
	in.GET("/deliveries/:id", h.showDelivery)
	in.POST("/deliveries/:id/replay", h.replayOne)
	in.POST("/deliveries/replay-failed", h.replayFailed)
}
