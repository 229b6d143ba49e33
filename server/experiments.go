package server

import (
	"bytes"
	"context"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/experiment"
	"github.com/salience-ai/salience/models"
)

// ExperimentService keeps a namespace's A/B experiments and computes their reports
// (experiment.Service).
type ExperimentService interface {
	// Create starts an experiment (id, status, times and author set by the service);
	// EINVALID naming the field, ECONFLICT when the namespace already runs one.
	Create(ctx context.Context, ns string, e *models.Experiment, by string) (*models.Experiment, error)
	Get(ctx context.Context, ns, id string) (*models.Experiment, error)
	List(ctx context.Context, ns string) ([]*models.Experiment, error)
	Stop(ctx context.Context, ns, id string) (*models.Experiment, error)
	// Report is the report as of now; SnapshotOn the daily snapshot nearest at or before day
	// (ENOTFOUND naming as_of when none).
	Report(ctx context.Context, ns, id string) (experiment.Report, error)
	SnapshotOn(ctx context.Context, ns, id string, day time.Time) (experiment.Snapshot, error)
	// Forget drops what is cached of ns, as the namespace was deleted.
	Forget(ns string)
}

// requireExperiments answers EUNAVAILABLE when the server was built without experiments.
func (s *Server) requireExperiments(c *gin.Context) {
	if s.experiments == nil {
		fail(c, models.Errorf(models.EUNAVAILABLE, "experiments are not configured on this server"))
		return
	}
	c.Next()
}

// createExperiment handles POST /v1/namespaces/:ns/experiments → 201.
func (s *Server) createExperiment(c *gin.Context) {
	body, err := readBody(c.Request)
	if err != nil {
		fail(c, err)
		return
	}
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		fail(c, models.Invalid("", "the body must be an experiment object"))
		return
	}
	var in api.ExperimentCreate
	if err := decodeStrict(body, &in); err != nil {
		fail(c, err)
		return
	}
	by := ""
	if p := principal(c); p != nil {
		by = p.Name
	}
	e, err := s.experiments.Create(c.Request.Context(), c.Param("ns"), experimentFromAPI(&in), by)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, experimentToAPI(e))
}

// listExperiments handles GET /v1/namespaces/:ns/experiments.
func (s *Server) listExperiments(c *gin.Context) {
	list, err := s.experiments.List(c.Request.Context(), c.Param("ns"))
	if err != nil {
		fail(c, err)
		return
	}
	out := api.ExperimentList{Experiments: make([]api.Experiment, 0, len(list))}
	for _, e := range list {
		out.Experiments = append(out.Experiments, *experimentToAPI(e))
	}
	c.JSON(http.StatusOK, out)
}

// getExperiment handles GET /v1/namespaces/:ns/experiments/:id.
func (s *Server) getExperiment(c *gin.Context) {
	e, err := s.experiments.Get(c.Request.Context(), c.Param("ns"), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, experimentToAPI(e))
}

// stopExperiment handles POST /v1/namespaces/:ns/experiments/:id/stop (idempotent).
func (s *Server) stopExperiment(c *gin.Context) {
	e, err := s.experiments.Stop(c.Request.Context(), c.Param("ns"), c.Param("id"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, experimentToAPI(e))
}

// Report formats and their media types.
var reportTypes = map[string]string{
	"json": "application/json",
	"csv":  "text/csv; charset=utf-8",
	"html": "text/html; charset=utf-8",
	"png":  "image/png",
	"text": "text/plain; charset=utf-8",
}

// reportFormat is the format asked for: the format parameter, else the first Accept type
// the server renders, else JSON.
func reportFormat(c *gin.Context) (string, error) {
	if f, ok := c.GetQuery("format"); ok {
		if _, known := reportTypes[f]; !known {
			return "", models.Invalid("format", "format must be json, csv, html, png or text")
		}
		return f, nil
	}
	for _, part := range strings.Split(c.GetHeader("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		for f, t := range reportTypes {
			if base, _, _ := strings.Cut(t, ";"); base == mt {
				return f, nil
			}
		}
	}
	return "json", nil
}

// experimentReport handles GET /v1/namespaces/:ns/experiments/:id/report: the report as of
// now, or with as_of=YYYY-MM-DD the daily snapshot nearest at or before that day; as JSON
// (default), CSV, HTML, plain text or a PNG plot (plot=precision, the default, or posterior).
func (s *Server) experimentReport(c *gin.Context) {
	if err := onlyQuery(c.Request.URL.Query(), "format", "plot", "as_of"); err != nil {
		fail(c, err)
		return
	}
	format, err := reportFormat(c)
	if err != nil {
		fail(c, err)
		return
	}
	plot := c.DefaultQuery("plot", "precision")
	if plot != "precision" && plot != "posterior" {
		fail(c, models.Invalid("plot", "plot must be precision or posterior"))
		return
	}
	ctx, ns, id := c.Request.Context(), c.Param("ns"), c.Param("id")
	var r experiment.Report
	if raw, ok := c.GetQuery("as_of"); ok {
		day, perr := time.Parse(time.DateOnly, raw)
		if perr != nil {
			fail(c, models.Invalid("as_of", "as_of must be a date, YYYY-MM-DD"))
			return
		}
		snap, err := s.experiments.SnapshotOn(ctx, ns, id, day)
		if err != nil {
			fail(c, err)
			return
		}
		r = snap.Report
	} else if r, err = s.experiments.Report(ctx, ns, id); err != nil {
		fail(c, err)
		return
	}
	var buf bytes.Buffer
	switch format {
	case "json":
		err = experiment.WriteJSON(&buf, r)
	case "csv":
		err = experiment.WriteCSV(&buf, r)
	case "html":
		err = experiment.WriteHTML(&buf, r)
	case "text":
		err = experiment.WriteText(&buf, r)
	case "png":
		err = experiment.WritePNG(&buf, r, plot)
	}
	if err != nil {
		fail(c, err)
		return
	}
	c.Data(http.StatusOK, reportTypes[format], buf.Bytes())
}

func experimentFromAPI(in *api.ExperimentCreate) *models.Experiment {
	e := &models.Experiment{Name: in.Name, Description: in.Description, PrimaryMetric: in.PrimaryMetric,
		Variants: make([]models.Variant, len(in.Variants))}
	for i, v := range in.Variants {
		o := v.Overrides
		mv := models.Variant{Name: v.Name, Share: v.Share, Overrides: models.Overrides{
			FreshnessHalfLifeHours: o.FreshnessHalfLifeHours, RelevanceModel: o.RelevanceModel,
			ThresholdPolicy: o.ThresholdPolicy, Rerank: o.Rerank}}
		if o.Diversity != nil {
			d := *o.Diversity
			mv.Overrides.Diversity = &d
		}
		if len(o.Weights) > 0 {
			mv.Overrides.Weights = make(map[models.Mode]models.ScoreWeights, len(o.Weights))
			for m, w := range o.Weights {
				mv.Overrides.Weights[models.Mode(m)] = models.ScoreWeights(w)
			}
		}
		e.Variants[i] = mv
	}
	return e
}

func experimentToAPI(e *models.Experiment) *api.Experiment {
	out := &api.Experiment{ID: e.ID, Namespace: e.Namespace, Name: e.Name, Description: e.Description, Status: e.Status,
		CreatedAt: e.CreatedAt, CreatedBy: e.CreatedBy, StoppedAt: e.StoppedAt, Variants: make([]api.Variant, len(e.Variants))}
	// A record made before experiments declared a metric ranks by the default.
	if m, ok := models.ParsePrimaryMetric(e.PrimaryMetric); ok {
		out.PrimaryMetric = m
	} else {
		out.PrimaryMetric = e.PrimaryMetric
	}
	for i, v := range e.Variants {
		o := v.Overrides
		av := api.Variant{Name: v.Name, Share: v.Share, Overrides: api.VariantOverrides{
			FreshnessHalfLifeHours: o.FreshnessHalfLifeHours, Diversity: o.Diversity, RelevanceModel: o.RelevanceModel,
			ThresholdPolicy: o.ThresholdPolicy, Rerank: o.Rerank}}
		if len(o.Weights) > 0 {
			av.Overrides.Weights = make(map[string]api.ScoreWeights, len(o.Weights))
			for m, w := range o.Weights {
				av.Overrides.Weights[string(m)] = api.ScoreWeights(w)
			}
		}
		out.Variants[i] = av
	}
	return out
}
