package server

import (
	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/models"
)

// routes builds the engine. Route groups follow authorization levels, so who may call what
// is visible here and nowhere else:
//
//   - open: health, readiness, metrics and the API description, for probes and scrapers;
//   - namespace: any key granted the :ns of the path;
//   - settings and experiments: the admin keys of :ns, or keys granted :ns when namespaces write their
//     own settings (--settings-writers namespace): an experiment changes a bot's recall as
//     settings do;
//   - admin: admin keys, each over the namespaces it is granted (Principal.AdminOf): the
//     namespace list shows only those, and the jobs, which act on every namespace, need an
//     admin key granted "*";
//   - mcp: the MCP tools of :ns, for any key granted it.
//
// Before any of it, for every route and the 404/405 answers: a server without keys answers
// only loopback Hosts and Origins, and any body must be JSON (origin.go).
func (s *Server) routes() *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.ContextWithFallback = true // c.Done()/c.Err() follow the request's context
	r.RemoveExtraSlash = true
	// gin would answer "/memories/" with a 301 and an HTML page; a JSON API answers 404 in
	// its error shape (NoRoute) and leaves the path to the caller.
	r.RedirectTrailingSlash = false
	r.NoRoute(func(c *gin.Context) {
		fail(c, models.Errorf(models.ENOTFOUND, "no route %s %s", c.Request.Method, c.Request.URL.Path))
	})
	r.NoMethod(func(c *gin.Context) {
		fail(c, models.Errorf(codeMethodNotAllowed, "method %s is not allowed on %s", c.Request.Method, c.Request.URL.Path))
	})
	r.Use(s.recoverPanics, s.requestLog, s.guardLoopback, s.requireJSON)

	// Open routes.
	r.GET("/healthz", s.healthz)
	r.GET("/readyz", s.readyz)
	r.GET("/metrics", gin.WrapH(s.metrics.handler()))
	r.GET("/openapi.yaml", s.openAPI)

	v1 := r.Group("/v1", s.authenticate, s.limitBody)

	// Namespace routes: the key must be granted :ns.
	ns := v1.Group("/namespaces/:ns", s.authorizeNamespace, s.requireReady)
	ns.POST("/memories", s.createMemories)
	ns.GET("/memories", s.listMemories)
	ns.GET("/memories/:id", s.getMemory)
	ns.PATCH("/memories/:id", s.patchMemory)
	ns.DELETE("/memories/:id", s.deleteMemory)
	ns.POST("/recall", s.recall)
	ns.POST("/predict", s.predict)
	ns.POST("/engagement", s.reportEngagement)
	ns.GET("/metrics", s.namespaceMetrics)
	ns.GET("/resurfacing", s.listResurfacing)
	ns.GET("/thresholds", s.getThresholds)

	// Settings routes: admin keys, and with --settings-writers namespace the keys granted :ns.
	set := v1.Group("/namespaces/:ns/settings", s.authorizeSettings, s.requireReady, s.requireSettings)
	set.GET("", s.getSettings)
	set.PUT("", s.putSettings)
	set.PATCH("", s.patchSettings)
	set.GET("/history", s.settingsHistory)

	// Experiment routes: who may write settings may run experiments.
	exp := v1.Group("/namespaces/:ns/experiments", s.authorizeSettings, s.requireReady, s.requireExperiments)
	exp.POST("", s.createExperiment)
	exp.GET("", s.listExperiments)
	exp.GET("/:id", s.getExperiment)
	exp.POST("/:id/stop", s.stopExperiment)
	exp.GET("/:id/report", s.experimentReport)

	// Admin routes: admin keys, over their own namespaces; the jobs need a "*" admin.
	admin := v1.Group("/admin", s.requireAdmin, s.requireReady)
	admin.GET("/namespaces", s.listNamespaces)
	admin.DELETE("/namespaces/:ns", s.requireAdminOf, s.deleteNamespace)
	admin.POST("/namespaces/:ns/relearn", s.requireAdminOf, s.relearn)
	jobs := admin.Group("/jobs", s.requireGlobalAdmin)
	jobs.GET("", s.listJobs)
	jobs.GET("/:name/runs", s.jobRuns)
	jobs.POST("/:name/run", s.runJob)

	// MCP tools over streamable HTTP: the same keys and namespace grants (mcp.go).
	r.POST("/mcp/:ns", s.authenticate, s.limitBody, s.authorizeNamespace, s.requireReady, s.serveMCP())

	return r
}
