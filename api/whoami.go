package api

import (
	"net/http"

	"github.com/revops/revops/internal/domain/orgs"

	"github.com/gin-gonic/gin"
)

type whoamiResponse struct {
	Object       string          `json:"object"`
	Environment  string          `json:"environment"`
	Type         string          `json:"type"`
	Organization organizationRef `json:"organization"`
}

type organizationRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (s *Server) whoami(c *gin.Context) {
	p := principal(c)
	org, err := orgs.Get(c.Request.Context(), s.store, p.Env.OrganizationID)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, whoamiResponse{
		Object: "api_key", Environment: p.Env.Name, Type: p.Type,
		Organization: organizationRef{ID: org.ID, Name: org.Name},
	})
}
