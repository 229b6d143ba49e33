package server

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
)

// healthz answers 200 whenever the process serves HTTP: a liveness probe.
func (s *Server) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, api.StatusResponse{Status: "ok"})
}

// readyz answers 503 until the store has loaded its indexes, then 200: a readiness probe.
func (s *Server) readyz(c *gin.Context) {
	if !s.ready() {
		fail(c, unavailable("loading indexes"))
		return
	}
	c.JSON(http.StatusOK, api.StatusResponse{Status: "ready"})
}

// openAPIDoc is the hand-written OpenAPI 3 description of every route.
//
//go:embed openapi.yaml
var openAPIDoc []byte

// OpenAPI returns the OpenAPI document the server serves at /openapi.yaml.
func OpenAPI() []byte { return openAPIDoc }

func (s *Server) openAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/yaml", openAPIDoc)
}
