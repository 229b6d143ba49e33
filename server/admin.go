package server

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
)

// NamespaceLister lists the namespaces that hold memories (admin).
type NamespaceLister interface {
	Namespaces(ctx context.Context) ([]string, error)
}

// listNamespaces handles GET /v1/admin/namespaces.
func (s *Server) listNamespaces(c *gin.Context) {
	ns, err := s.namespaces.Namespaces(c.Request.Context())
	if err != nil {
		fail(c, err)
		return
	}
	if ns == nil {
		ns = []string{}
	}
	c.JSON(http.StatusOK, api.NamespacesResponse{Namespaces: ns})
}
