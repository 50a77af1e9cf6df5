package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/meters"
)

// The meters of CONTRACT §18: definitions here, their values in meter_values.go. Bodies
// are checked by the meters package (every fault at once); a meter is addressed by its
// key, which pathIDs has checked can be one.

func (s *Server) createMeter(c *gin.Context) {
	body, err := requiredBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	d, err := meters.DecodeCreate(body)
	if err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[meters.Object](c, http.StatusCreated)
	m, err := meters.Create(c.Request.Context(), s.store, principal(c).Env, d, time.Now(), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, reply.Status(), meters.ToObject(m))
}

func (s *Server) listMeters(c *gin.Context) {
	page, err := pageParams(c)
	if err != nil {
		fail(c, err)
		return
	}
	ms, more, err := meters.List(c.Request.Context(), s.store, principal(c).Env, page)
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]meters.Object, len(ms))
	for i, m := range ms {
		out[i] = meters.ToObject(m)
	}
	render(c, http.StatusOK, newList(out, more))
}

func (s *Server) getMeter(c *gin.Context) {
	m, err := meters.Get(c.Request.Context(), s.store, principal(c).Env, c.Param("key"))
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, meters.ToObject(m))
}

func (s *Server) updateMeter(c *gin.Context) {
	body, err := requiredBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	description, err := meters.DecodePatch(body)
	if err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[meters.Object](c, http.StatusOK)
	m, err := meters.SetDescription(c.Request.Context(), s.store, principal(c).Env, c.Param("key"), description, time.Now(), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, reply.Status(), meters.ToObject(m))
}

func (s *Server) deleteMeter(c *gin.Context) {
	if err := bindNoParams(c); err != nil {
		fail(c, err)
		return
	}
	reply := replyAs[meters.Deleted](c, http.StatusOK)
	m, err := meters.Delete(c.Request.Context(), s.store, principal(c).Env, c.Param("key"), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, reply.Status(), meters.ToDeleted(m))
}
