package api

import (
	"github.com/gin-gonic/gin"
	"github.com/revops/revops/internal/domain/idempotency"
)

const jsonContentType = "application/json; charset=utf-8"

// render answers with v as JSON (idempotency.Marshal: no HTML escapes), every API
// answer goes through here. When the request's change kept its idempotent answer in its
// transaction (CONTRACT §14), v was rendered there: render sends those bytes, so that
// the first answer and every replay are the same.
func render(c *gin.Context, status int, v any) {
	if a := claimOf(c); a != nil {
		if kstatus, body, kept := a.Kept(); kept {
			c.Data(kstatus, jsonContentType, body)
			return
		}
	}
	write(c, status, v)
}

// abortJSON answers with v and ends the request (errors).
func abortJSON(c *gin.Context, status int, v any) {
	c.Abort()
	write(c, status, v)
}

// write sends v as JSON.
func write(c *gin.Context, status int, v any) {
	b, err := idempotency.Marshal(v)
	if err != nil {
		fail(c, err)
		return
	}
	c.Data(status, jsonContentType, b)
}
