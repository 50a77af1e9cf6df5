package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// openapiJSON serves GET /v1/openapi.json (any valid key, CONTRACT §9): the document New
// built.
func (s *Server) openapiJSON(c *gin.Context) {
	if s.openapiErr != nil {
		fail(c, s.openapiErr)
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", s.openapi)
}
