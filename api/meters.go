package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/models"
)

// The meters of CONTRACT §18: definitions here, their values in meter_values.go. Bodies
// are checked by the meters package (every fault at once); a meter is addressed by its
// key, which pathIDs has checked can be one.

// meterObject is the §18 meter object.
type meterObject struct {
	ID          string      `json:"id"`
	Object      string      `json:"object"`
	Key         string      `json:"key"`
	Description string      `json:"description"`
	Filter      meterFilter `json:"filter"`
	Aggregation string      `json:"aggregation"`
	ValueKey    *string     `json:"value_key"`
	GroupBy     []string    `json:"group_by"`
	Status      string      `json:"status"`
	CreatedAt   string      `json:"created_at"`
	UpdatedAt   string      `json:"updated_at"`
}

type meterFilter struct {
	MetricName string  `json:"metric_name"`
	Product    *string `json:"product"` // null: any product
}

func toMeterObject(m models.Meter) meterObject {
	o := meterObject{
		ID: m.ID, Object: "meter", Key: m.Key, Description: m.Description,
		Filter:      meterFilter{MetricName: m.FilterMetricName, Product: nonEmpty(m.FilterProduct)},
		Aggregation: m.Aggregation, ValueKey: nonEmpty(m.ValueKey), GroupBy: m.GroupBy, Status: m.Status,
		CreatedAt: m.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: m.UpdatedAt.UTC().Format(time.RFC3339Nano),
	}
	if o.GroupBy == nil {
		o.GroupBy = []string{}
	}
	return o
}

// toDeletedMeter is DELETE's answer. A meter is removed, not kept in a final state (its
// figures go with it), so the answer is the deleted stub of the other hard delete
// (webhook endpoints, CONTRACT §13), not the object as accounts' soft delete answers.
func toDeletedMeter(m models.Meter) deletedObject {
	return deletedObject{ID: m.ID, Object: "meter", Deleted: true}
}

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
	reply := replyWith(c, http.StatusCreated, toMeterObject)
	m, err := s.meters.Create(c.Request.Context(), principal(c).Env, d, time.Now(), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusCreated, toMeterObject(m))
}

func (s *Server) listMeters(c *gin.Context) {
	page, err := pageParams(c)
	if err != nil {
		fail(c, err)
		return
	}
	ms, more, err := s.meters.List(c.Request.Context(), principal(c).Env, page)
	if err != nil {
		fail(c, err)
		return
	}
	out := make([]meterObject, len(ms))
	for i, m := range ms {
		out[i] = toMeterObject(m)
	}
	render(c, http.StatusOK, newList(out, more))
}

func (s *Server) getMeter(c *gin.Context) {
	m, err := s.meters.Get(c.Request.Context(), principal(c).Env, c.Param("key"))
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, toMeterObject(m))
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
	reply := replyWith(c, http.StatusOK, toMeterObject)
	m, err := s.meters.SetDescription(c.Request.Context(), principal(c).Env, c.Param("key"), description, time.Now(), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, toMeterObject(m))
}

func (s *Server) deleteMeter(c *gin.Context) {
	if err := bindNoParams(c); err != nil {
		fail(c, err)
		return
	}
	reply := replyWith(c, http.StatusOK, toDeletedMeter)
	m, err := s.meters.Delete(c.Request.Context(), principal(c).Env, c.Param("key"), reply)
	if err != nil {
		fail(c, err)
		return
	}
	render(c, http.StatusOK, toDeletedMeter(m))
}
