package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/settings"
	"github.com/salience-ai/salience/store/sqlite"

	"github.com/goccy/go-yaml"
)

// TestLoopbackHostAndOrigin: without keys every route — REST, admin, MCP, metrics, the
// OpenAPI document — answers loopback Hosts (names and addresses, with a port or without,
// IPv6 included) and loopback Origins only; anything else is 403 in the error shape.
func TestLoopbackHostAndOrigin(t *testing.T) {
	s, _ := newTestServer(t, Config{Jobs: &fakeScheduler{}, Queue: &fakeQueue{}})
	const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	routes := []struct{ name, method, path, body string }{
		{"REST", "GET", "/v1/namespaces/a/resurfacing", ""},
		{"admin", "GET", "/v1/admin/jobs", ""},
		{"MCP", "POST", "/mcp/a", toolsList},
		{"metrics", "GET", "/metrics", ""},
		{"openapi", "GET", "/openapi.yaml", ""},
	}
	cases := []struct {
		host, origin string // origin "" sends none
		ok           bool
	}{
		{"localhost", "", true},
		{"localhost:7700", "", true},
		{"LocalHost:7700", "", true},
		{"127.0.0.1", "", true},
		{"127.0.0.1:7700", "", true},
		{"127.9.8.7:80", "", true}, // all of 127.0.0.0/8 is loopback
		{"[::1]", "", true},
		{"[::1]:7700", "", true},
		{"localhost:7700", "http://localhost:7700", true},
		{"127.0.0.1:7700", "http://127.0.0.1:7700", true},
		{"[::1]:7700", "https://[::1]:7700", true},

		{"localhost.evil.example", "", false},
		{"127.0.0.1.nip.io", "", false},
		{"127.0.0.1.nip.io:7700", "", false},
		{"evil.example:7700", "", false},
		{"evil.example", "", false},
		{"", "", false},
		{"0.0.0.0:7700", "", false},
		{"10.0.0.7:7700", "", false},
		{"[::]:7700", "", false},
		{"::1", "", false}, // IPv6 without brackets is no Host
		{"[::1]x", "", false},
		{"localhost:", "", false},
		{"localhost:77a", "", false},
		{"localhost.", "", false},
		{"127.1", "", false},
		{"localhost:7700", "http://evil.example", false},
		{"localhost:7700", "http://evil.example:7700", false},
		{"127.0.0.1:7700", "http://localhost.evil.example:7700", false},
		{"127.0.0.1:7700", "http://127.0.0.1.nip.io:7700", false},
		{"localhost:7700", "null", false},
		{"localhost:7700", "file://", false},
		{"localhost:7700", "ftp://localhost", false},
		{"localhost:7700", "http://user@localhost:7700", false},
		{"localhost:7700", "http://localhost:7700/page", false},
	}
	for _, r := range routes {
		for _, tc := range cases {
			header := []string{"Host", tc.host, "Accept", "application/json, text/event-stream"}
			if tc.origin != "" {
				header = append(header, "Origin", tc.origin)
			}
			res, body := do(t, s.Handler(), r.method, r.path, r.body, header...)
			switch {
			case tc.ok && res.StatusCode != 200:
				t.Errorf("%s, Host %q Origin %q = %d %s, want 200", r.name, tc.host, tc.origin, res.StatusCode, body)
			case !tc.ok && (res.StatusCode != 403 || errorOf(t, body).Code != "forbidden"):
				t.Errorf("%s, Host %q Origin %q = %d %s, want 403 forbidden", r.name, tc.host, tc.origin, res.StatusCode, body)
			}
		}
	}
}

// TestForeignHostWithKeys: a server with keys may listen anywhere, under any name: the Host
// and Origin rules are the keyless server's.
func TestForeignHostWithKeys(t *testing.T) {
	s := jobsServer(t, &fakeScheduler{}, &fakeQueue{})
	res, body := do(t, s.Handler(), "GET", "/v1/namespaces/a/resurfacing", "",
		"Host", "salience.example:7700", "Origin", "https://app.example", "Authorization", "Bearer sk-tenant-a-0000000")
	if res.StatusCode != 200 {
		t.Errorf("keyed server, foreign Host and Origin = %d %s, want 200", res.StatusCode, body)
	}
}

// TestBodyMustBeJSON: with or without keys a body in any type but application/json (with
// parameters, in any case) is 415 in the error shape; a POST without a body needs no type.
func TestBodyMustBeJSON(t *testing.T) {
	keyless, _ := newTestServer(t, Config{Jobs: &fakeScheduler{}})
	keyed := jobsServer(t, &fakeScheduler{}, &fakeQueue{})
	for _, srv := range []struct {
		name string
		s    *Server
		auth []string
	}{{"keyless", keyless, nil}, {"keyed", keyed, []string{"Authorization", adminKey}}} {
		cases := []struct {
			method, path, body, ctype string
			want                      int
		}{
			// The body of a job run is ignored: only its type decides.
			{"POST", "/v1/admin/jobs/decay-scan/run", `{}`, "text/plain", 415},
			{"POST", "/v1/admin/jobs/decay-scan/run", `{}`, "", 415},
			{"POST", "/v1/admin/jobs/decay-scan/run", `{}`, "application/x-www-form-urlencoded", 415},
			{"POST", "/v1/admin/jobs/decay-scan/run", `{}`, "multipart/form-data; boundary=x", 415},
			{"POST", "/v1/admin/jobs/decay-scan/run", `{}`, "application/jsonx", 415},
			{"POST", "/v1/admin/jobs/decay-scan/run", `{}`, "application/json-patch+json", 415},
			{"POST", "/v1/namespaces/a/memories", `{"memories":[{"kind":"fact","content":"x"}]}`, "text/plain", 415},
			{"GET", "/healthz", `x`, "text/plain", 415},
			{"POST", "/v1/admin/jobs/decay-scan/run", `{}`, "application/merge-patch+json", 415}, // PATCH only
			{"POST", "/v1/admin/jobs/decay-scan/run", `{}`, "application/json; charset=utf-8", 202},
			{"POST", "/v1/admin/jobs/decay-scan/run", `{}`, "Application/JSON", 202},
		}
		for _, tc := range cases {
			srv.s.jobs = &fakeScheduler{} // not busy
			header := append([]string{"Content-Type", tc.ctype}, srv.auth...)
			res, body := do(t, srv.s.Handler(), tc.method, tc.path, tc.body, header...)
			if res.StatusCode != tc.want {
				t.Errorf("%s: %s %s as %q = %d %s, want %d", srv.name, tc.method, tc.path, tc.ctype, res.StatusCode, body, tc.want)
				continue
			}
			if tc.want == 415 && errorOf(t, body).Code != "unsupported_media_type" {
				t.Errorf("%s: %s %s as %q: code %q, want unsupported_media_type", srv.name, tc.method, tc.path, tc.ctype, errorOf(t, body).Code)
			}
		}
		// A POST without a body, and a chunked one with nothing in it, need no type.
		srv.s.jobs = &fakeScheduler{}
		req := newRequest("POST", "/v1/admin/jobs/decay-scan/run", nil)
		for i := 0; i+1 < len(srv.auth); i += 2 {
			req.Header.Set(srv.auth[i], srv.auth[i+1])
		}
		if res, body := send(t, srv.s.Handler(), req); res.StatusCode != 202 {
			t.Errorf("%s: bodyless POST without a type = %d %s, want 202", srv.name, res.StatusCode, body)
		}
		srv.s.jobs = &fakeScheduler{}
		req = newRequest("POST", "/v1/admin/jobs/decay-scan/run", strings.NewReader(""))
		req.ContentLength = -1
		for i := 0; i+1 < len(srv.auth); i += 2 {
			req.Header.Set(srv.auth[i], srv.auth[i+1])
		}
		if res, body := send(t, srv.s.Handler(), req); res.StatusCode != 202 {
			t.Errorf("%s: empty chunked POST without a type = %d %s, want 202", srv.name, res.StatusCode, body)
		}
		// A chunked body with bytes in it is a body.
		req = newRequest("POST", "/v1/admin/jobs/decay-scan/run", io.MultiReader(strings.NewReader("{}")))
		req.ContentLength = -1
		for i := 0; i+1 < len(srv.auth); i += 2 {
			req.Header.Set(srv.auth[i], srv.auth[i+1])
		}
		if res, body := send(t, srv.s.Handler(), req); res.StatusCode != 415 {
			t.Errorf("%s: chunked body without a type = %d %s, want 415", srv.name, res.StatusCode, body)
		}
	}
}

// TestTrailingSlashIsAJSONNotFound: gin used to redirect "/memories/" with a 301 and an HTML
// body; a JSON API answers 404 in its error shape.
func TestTrailingSlashIsAJSONNotFound(t *testing.T) {
	s, _ := newTestServer(t, Config{Queue: &fakeQueue{}})
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/namespaces/a/memories/"},
		{"POST", "/v1/namespaces/a/memories/"},
		{"GET", "/v1/namespaces/a/resurfacing/"},
		{"GET", "/healthz/"},
	} {
		res, body := do(t, s.Handler(), r.method, r.path, "")
		if res.StatusCode != 404 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || errorOf(t, body).Code != "not_found" {
			t.Errorf("%s %s = %d %q %s, want a JSON 404", r.method, r.path, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
		if loc := res.Header.Get("Location"); loc != "" {
			t.Errorf("%s %s redirects to %q", r.method, r.path, loc)
		}
	}
}

// TestOpenAPINamesTheListenAddress: the served document names the address the server is
// bound to, not the default 127.0.0.1:7700.
func TestOpenAPINamesTheListenAddress(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1:54321", "http://127.0.0.1:54321"},
		{"[::1]:7701", "http://[::1]:7701"},
		{"10.1.2.3:80", "http://10.1.2.3:80"},
		{"0.0.0.0:7700", "/"}, // every interface: the host the document was fetched from
		{"[::]:7700", "/"},
		{"", "http://127.0.0.1:7700"}, // not bound by internal/app: the document as written
	} {
		s, _ := newTestServer(t, Config{Addr: tc.addr, Keys: mustKeys(t)})
		res, body := do(t, s.Handler(), "GET", "/openapi.yaml", "", "Host", "127.0.0.1")
		if res.StatusCode != 200 {
			t.Fatalf("GET /openapi.yaml = %d", res.StatusCode)
		}
		var doc struct {
			Servers []struct{ URL string } `yaml:"servers"`
			Paths   map[string]any         `yaml:"paths"`
		}
		if err := yaml.Unmarshal(body, &doc); err != nil {
			t.Fatalf("addr %q: the served document does not parse: %v", tc.addr, err)
		}
		if len(doc.Servers) != 1 || doc.Servers[0].URL != tc.want || len(doc.Paths) == 0 {
			t.Errorf("addr %q: servers = %+v (%d paths), want one, %q", tc.addr, doc.Servers, len(doc.Paths), tc.want)
		}
	}
}

// mustKeys is a keyring of one tenant key, for a server that may listen anywhere.
func mustKeys(t *testing.T) *Keyring {
	t.Helper()
	k, err := ParseKeys([]byte(`{"keys":[{"key":"sk-tenant-a-0000000","namespaces":["a"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// FuzzLoopbackHost: a Host or Origin accepted names "localhost" or a loopback address, by a
// second reading through the standard library; nothing panics.
func FuzzLoopbackHost(f *testing.F) {
	for _, s := range []string{"localhost", "localhost:7700", "127.0.0.1", "127.0.0.1:7700", "[::1]", "[::1]:7700",
		"localhost.evil.example", "127.0.0.1.nip.io", "evil.example:7700", "[::1%eth0]", "::1", "[::ffff:127.0.0.1]",
		"http://localhost:7700", "null", "http://[::1]", "https://127.0.0.1.nip.io"} {
		f.Add(s)
	}
	loopback := func(hostport string) bool {
		host := hostport
		if h, _, err := net.SplitHostPort(hostport); err == nil {
			host = h
		} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
		}
		ip, err := netip.ParseAddr(host)
		return strings.EqualFold(host, "localhost") || (err == nil && ip.IsLoopback())
	}
	f.Fuzz(func(t *testing.T, s string) {
		if loopbackHost(s) && !loopback(s) {
			t.Fatalf("loopbackHost(%q) = true, but it does not name loopback", s)
		}
		if loopbackOrigin(s) {
			u, err := url.Parse(s)
			if err != nil || !loopback(u.Host) {
				t.Fatalf("loopbackOrigin(%q) = true, but its host does not name loopback", s)
			}
		}
	})
}

// TestMergePatchType: a settings PATCH may say RFC 7396's application/merge-patch+json,
// as the API document lists it, and is applied like application/json.
func TestMergePatchType(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "salience.db"), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, _ := newTestServer(t, Config{Settings: settings.New(st, settings.Options{})})
	res, body := do(t, s.Handler(), http.MethodPatch, "/v1/namespaces/a/settings", `{"diversity": 0.2}`,
		"Content-Type", "application/merge-patch+json")
	var got api.Settings
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil || got.Version != 1 || got.Diversity == nil || *got.Diversity != 0.2 {
		t.Fatalf("merge-patch PATCH = %d %s, want 200, version 1, diversity 0.2", res.StatusCode, body)
	}
}
