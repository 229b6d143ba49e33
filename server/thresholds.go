package server

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
)

// ThresholdReporter reads a namespace's threshold bandit state in its wire form.
type ThresholdReporter interface {
	Thresholds(ctx context.Context, ns string) (*api.ThresholdsResponse, error)
}

// thresholds handles GET /v1/namespaces/:ns/thresholds: the bandit's posterior per
// conversation type.
func (s *Server) getThresholds(c *gin.Context) {
	if s.thresholds == nil {
		fail(c, models.Errorf(models.EUNAVAILABLE, "the threshold bandit is not configured on this server"))
		return
	}
	if err := noQuery(c.Request.URL.Query()); err != nil {
		fail(c, err)
		return
	}
	r, err := s.thresholds.Thresholds(c.Request.Context(), c.Param("ns"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, r)
}
