package server

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/mcp"
)

// headerMCPNamespace carries the namespace of an /mcp/:ns request from the route to the
// tools. serveMCP sets it after authorization, over anything the caller sent.
const headerMCPNamespace = "X-Salience-Mcp-Namespace"

// inProcessBase is the base URL of the client the MCP tools call the API with; the requests
// never leave the process, so the host is only a label — a loopback one, which the Host rule
// of a server without keys (guardLoopback) admits.
const inProcessBase = "http://localhost"

// serveMCP serves the MCP tools over streamable HTTP at /mcp/:ns. The tools call the
// namespace routes of this same server, in process, with the caller's own Authorization
// header: they are validated, authorized, logged and counted exactly as the REST calls are,
// and a key granted namespace a reaches only a through MCP too.
func (s *Server) serveMCP() gin.HandlerFunc {
	hc := &http.Client{Transport: inProcess{s}}
	h := mcp.NewHTTPHandler(func(h http.Header) mcp.Backend {
		c, err := client.New(inProcessBase, client.WithHTTPClient(hc), client.WithKey(bearerToken(h)),
			client.WithRetries(0, 0), client.WithTimeout(0), client.WithUserAgent("salience-mcp"))
		if err != nil {
			return nil // cannot happen: the base URL is a constant
		}
		return c.Namespace(h.Get(headerMCPNamespace))
	}, mcp.Options{AnyHost: true}) // guardLoopback, before every route, checks the Host: one rule, one place
	return func(c *gin.Context) {
		c.Request.Header.Set(headerMCPNamespace, c.Param("ns"))
		h.ServeHTTP(c.Writer, c.Request)
	}
}

// bearerToken returns the key of an Authorization header authenticate accepted ("" when the
// server runs without keys and none was sent).
func bearerToken(h http.Header) string {
	_, token, _ := strings.Cut(h.Get("Authorization"), " ")
	return strings.TrimSpace(token)
}

// inProcess is an http.RoundTripper that serves a request with the server's own router.
type inProcess struct{ s *Server }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	w := &responseBuffer{header: http.Header{}}
	t.s.engine.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{
		Status:        http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.header,
		Body:          io.NopCloser(&w.body),
		ContentLength: int64(w.body.Len()),
		Request:       req,
	}, nil
}

// responseBuffer is the http.ResponseWriter of an in-process request.
type responseBuffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *responseBuffer) Header() http.Header { return w.header }

func (w *responseBuffer) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *responseBuffer) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
