package server

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/models"
)

// Relearner rebuilds a namespace's relevance model from its event log (engagement.Service).
type Relearner interface {
	Relearn(ctx context.Context, ns string, fromKept bool) (*engagement.RelearnResult, error)
}

// errNoRelearn answers the relearn route of a server built without it.
var errNoRelearn = models.Errorf(models.EUNAVAILABLE, "relearn is not configured on this server")

// relearn handles POST /v1/admin/namespaces/:ns/relearn.
func (s *Server) relearn(c *gin.Context) {
	if s.relearner == nil {
		fail(c, errNoRelearn)
		return
	}
	if err := onlyQuery(c.Request.URL.Query(), "from_kept"); err != nil {
		fail(c, err)
		return
	}
	ns := c.Param("ns")
	fromKept := false
	if v, ok := c.GetQuery("from_kept"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fail(c, models.Invalid("from_kept", "from_kept must be true or false, got %q", models.Clip(v, 40)))
			return
		}
		fromKept = b
	}
	r, err := s.relearner.Relearn(c.Request.Context(), ns, fromKept)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, api.RelearnResponse{Namespace: ns, Events: r.Events, Skipped: r.Skipped, Version: r.Version, MaxDiff: r.MaxDiff})
}

// NamespaceLister lists the namespaces that hold memories, with the embedder of those that
// hold vectors, and deletes one (admin).
type NamespaceLister interface {
	Namespaces(ctx context.Context) ([]string, error)
	Embedders(ctx context.Context) (map[string]models.EmbedderIdentity, error)
	DeleteNamespace(ctx context.Context, ns string) (models.NamespaceDeleted, error)
}

// forgetter is a Recaller that caches what it learns of a namespace and drops it on request.
type forgetter interface{ Forget(ns string) }

// deleteNamespace handles DELETE /v1/admin/namespaces/{ns}: everything of the namespace
// goes (models.Store's DeleteNamespace), and this server's caches of its settings, experiment
// and prediction models with it.
func (s *Server) deleteNamespace(c *gin.Context) {
	ns := c.Param("ns")
	d, err := s.namespaces.DeleteNamespace(c.Request.Context(), ns)
	if err != nil {
		fail(c, err)
		return
	}
	if s.settings != nil {
		s.settings.Forget(ns)
	}
	if s.experiments != nil {
		s.experiments.Forget(ns)
	}
	if f, ok := s.recaller.(forgetter); ok {
		f.Forget(ns) // the recaller's caches of it (recall.Pipeline's prediction models)
	}
	s.log.Info("namespace deleted", "namespace", ns, "memories", d.Memories, "records", d.Records)
	c.JSON(http.StatusOK, api.NamespaceDeletedResponse{Namespace: ns, Memories: d.Memories, Records: d.Records})
}

// listNamespaces handles GET /v1/admin/namespaces: the namespaces holding memories that the
// key administers — all of them for a "*" admin, else only those it is granted.
func (s *Server) listNamespaces(c *gin.Context) {
	all, err := s.namespaces.Namespaces(c.Request.Context())
	if err != nil {
		fail(c, err)
		return
	}
	p := principal(c)
	ns := []string{}
	for _, n := range all {
		if p.AdminOf(n) {
			ns = append(ns, n)
		}
	}
	ids, err := s.namespaces.Embedders(c.Request.Context())
	if err != nil {
		fail(c, err)
		return
	}
	resp := api.NamespacesResponse{Namespaces: ns, Embedders: make(map[string]api.Embedder, len(ids))}
	for n, id := range ids {
		if p.AdminOf(n) { // a scoped admin must not learn the names of other namespaces
			resp.Embedders[n] = api.Embedder{Name: id.Name, Dims: id.Dims}
		}
	}
	if s.embedder.Name != "" {
		resp.Embedder = &api.Embedder{Name: s.embedder.Name, Dims: s.embedder.Dims}
	}
	c.JSON(http.StatusOK, resp)
}
