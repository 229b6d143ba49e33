package server

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
)

// MetricsReporter computes a namespace's engagement metrics (engagement.Service) in their
// wire form. Bad bounds are EINVALID naming "until".
type MetricsReporter interface {
	Metrics(ctx context.Context, ns string, since, until time.Time) (*api.MetricsResponse, error)
}

// errNoMetrics answers the metrics route of a server built without a reporter.
var errNoMetrics = models.Errorf(models.EUNAVAILABLE, "engagement metrics are not configured on this server")

// namespaceMetrics handles GET /v1/namespaces/:ns/metrics?since=&until= (RFC 3339, both
// optional): the engagement metrics of the surfacings and events in [since, until).
func (s *Server) namespaceMetrics(c *gin.Context) {
	if s.reports == nil {
		fail(c, errNoMetrics)
		return
	}
	since, until, err := parseMetricsQuery(c.Request.URL.Query())
	if err != nil {
		fail(c, err)
		return
	}
	r, err := s.reports.Metrics(c.Request.Context(), c.Param("ns"), since, until)
	if err != nil {
		fail(c, err)
		return
	}
	if s.namespaces != nil {
		ids, err := s.namespaces.Embedders(c.Request.Context())
		if err != nil {
			fail(c, err)
			return
		}
		if id, ok := ids[c.Param("ns")]; ok {
			r.Embedder = &api.Embedder{Name: id.Name, Dims: id.Dims}
		}
	}
	c.JSON(http.StatusOK, r)
}

// parseMetricsQuery reads since and until; unknown or repeated parameters are EINVALID.
func parseMetricsQuery(q url.Values) (since, until time.Time, err error) {
	if err = onlyQuery(q, "since", "until"); err != nil {
		return since, until, err
	}
	if since, err = timeParam(q, "since"); err != nil {
		return since, until, err
	}
	if until, err = timeParam(q, "until"); err != nil {
		return since, until, err
	}
	if !since.IsZero() && !until.IsZero() && !until.After(since) {
		return since, until, models.Invalid("until", "until must be after since")
	}
	return since, until, nil
}
