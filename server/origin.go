package server

import (
	"bufio"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/models"
)

// What a server accepts from browsers. A server without keys answers every request as an
// admin, so a web page must not reach it: through DNS rebinding (a page's own host name
// pointed at 127.0.0.1, sent as the Host) or a cross-site request (the page's Origin). A
// server with keys is exempt from the Host and Origin rules: it may listen anywhere under
// any name, and a page holds no key (keys travel in the Authorization header, which a
// browser never adds on its own).

// guardLoopback is the one place the Host and Origin rules live; it runs before every route
// (REST, MCP, metrics, the OpenAPI document) and the 404/405 answers. Without keys a request
// must name a loopback Host and, when it carries an Origin, a loopback origin; else 403.
func (s *Server) guardLoopback(c *gin.Context) {
	if s.keys != nil {
		c.Next()
		return
	}
	if !loopbackHost(c.Request.Host) {
		fail(c, models.Errorf(models.EFORBIDDEN, "host %q is not a loopback name: a server without API keys answers only requests to localhost, 127.0.0.1 or [::1]", models.Clip(c.Request.Host, 70)))
		return
	}
	if o, ok := c.Request.Header["Origin"]; ok && (len(o) != 1 || !loopbackOrigin(o[0])) {
		fail(c, models.Errorf(models.EFORBIDDEN, "origin %q is not a loopback origin: a server without API keys answers no cross-site request", models.Clip(strings.Join(o, ", "), 70)))
		return
	}
	c.Next()
}

// loopbackHost reports whether a Host header (host or host:port) names the loopback
// interface: "localhost", an address in 127.0.0.0/8, or [::1]. A name only resolves to
// loopback when it is exactly "localhost"; "localhost.evil.example" and "127.0.0.1.nip.io"
// are names a rebinding page controls. IPv6 must be bracketed, as in a URL, and carry no zone.
func loopbackHost(hostport string) bool {
	host := hostport
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 || !validPort(hostport[end+1:]) {
			return false
		}
		host = hostport[1:end]
		ip, err := netip.ParseAddr(host)
		return err == nil && ip.Is6() && ip.Zone() == "" && ip.IsLoopback()
	}
	if i := strings.IndexByte(hostport, ':'); i >= 0 {
		if !validPort(hostport[i:]) {
			return false
		}
		host = hostport[:i]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Is4() && ip.IsLoopback()
}

// validPort accepts what may follow a host in a Host header: nothing, or ":" and 1–5 digits.
func validPort(s string) bool {
	if s == "" {
		return true
	}
	if s[0] != ':' || len(s) < 2 || len(s) > 6 {
		return false
	}
	for _, r := range s[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// loopbackOrigin reports whether an Origin header is an http or https origin on a loopback
// host. "null" (sandboxed frames, file: pages, some redirects) is not: it could be anyone.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil ||
		u.Opaque != "" || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return false
	}
	return loopbackHost(u.Host)
}

// requireJSON refuses a request that carries a body in any media type but application/json
// (parameters such as charset allowed), with or without keys: a browser sends text/plain,
// form and multipart bodies across sites without asking first, and a JSON API reads JSON
// only. A request carries a body when it has at least one byte of one, declared or streamed
// (chunked); a POST without a body (stopping an experiment, running a job) needs no type. A
// PATCH may also say application/merge-patch+json, RFC 7396's type for what it is.
func (s *Server) requireJSON(c *gin.Context) {
	if !hasBody(c.Request) {
		c.Next()
		return
	}
	ct := c.GetHeader("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	ok := mt == "application/json" || (c.Request.Method == http.MethodPatch && mt == "application/merge-patch+json")
	if err != nil || !ok { // ParseMediaType lowercases the type
		what := "no Content-Type"
		if ct != "" {
			what = "Content-Type " + models.Clip(ct, 70)
		}
		fail(c, models.Errorf(codeUnsupportedMediaType, "a request body must be application/json, got %s", what))
		return
	}
	c.Next()
}

// hasBody reports whether r carries at least one byte of body. A length not declared
// (chunked, or a request built in process) is settled by peeking at the first byte, which
// stays in the body for the handler.
func hasBody(r *http.Request) bool {
	if r.ContentLength > 0 {
		return true
	}
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	br := bufio.NewReaderSize(r.Body, 16)
	_, err := br.Peek(1)
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	return err == nil
}
