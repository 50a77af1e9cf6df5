package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/api/openapi"
)

// openapiHandler serves GET /v1/openapi.json (any valid key, CONTRACT §9). The document
// is built once: it depends only on the configured public URL.
func openapiHandler(publicURL string) gin.HandlerFunc {
	doc, err := openapi.Document(publicURL)
	return func(c *gin.Context) {
		if err != nil {
			fail(c, err)
			return
		}
		c.Data(http.StatusOK, "application/json; charset=utf-8", doc)
	}
}
