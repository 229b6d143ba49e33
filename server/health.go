package server

import (
	"bytes"
	_ "embed"
	"net"
	"net/http"
	"net/netip"
	"strconv"

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
	c.Data(http.StatusOK, "application/yaml", s.openAPIDoc)
}

// docServerLine is the servers entry of openapi.yaml: the default listen address.
const docServerLine = "\n  - url: http://127.0.0.1:7700\n"

// openAPIFor returns the document naming addr (host:port, as bound) as its server, so a
// client generated from it calls this server. A server listening on every interface
// (0.0.0.0, [::]) is named by the relative URL "/": the host the document was fetched from.
// An empty addr (a server not bound by internal/app) keeps the document as written.
func openAPIFor(addr string) []byte {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return openAPIDoc
	}
	url := "http://" + net.JoinHostPort(host, port)
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		url = "/"
	}
	return bytes.Replace(openAPIDoc, []byte(docServerLine), []byte("\n  - url: "+strconv.Quote(url)+"\n"), 1)
}
