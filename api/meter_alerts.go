package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/meters"
)

// The alerts of a meter (CONTRACT §24), under the meter's key. The body is checked by the
// meters package (every fault at once), then against the meter it names.

func (s *Server) createMeterAlert(c *gin.Context) {
	body, err := requiredBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	d, err := meters.DecodeAlert(body)
	if err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[meters.AlertObject](c, http.StatusCreated)
	a, err := meters.CreateAlert(c.Request.Context(), s.store, principal(c).Env, c.Param("key"), d, reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, reply.Status(), a)
}

func (s *Server) listMeterAlerts(c *gin.Context) {
	page, err := pageParams(c)
	if err != nil {
		fail(c, err)
		return
	}
	as, more, err := meters.Alerts(c.Request.Context(), s.store, principal(c).Env, c.Param("key"), page)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, newList(as, more))
}

func (s *Server) getMeterAlert(c *gin.Context) {
	a, err := meters.Alert(c.Request.Context(), s.store, principal(c).Env, c.Param("key"), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, a)
}

func (s *Server) deleteMeterAlert(c *gin.Context) {
	if err := bindNoParams(c); err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[meters.Deleted](c, http.StatusOK)
	d, err := meters.DeleteAlert(c.Request.Context(), s.store, principal(c).Env, c.Param("key"), c.Param("id"), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, reply.Status(), d)
}
