package app

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
)

const (
	keyA     = "sk-tenant-a-000000000001"
	keyB     = "sk-tenant-b-000000000002"
	keyAdmin = "sk-admin-00000000000003"
	keyAll   = "sk-every-ns-000000000004"
	keyAdmB  = "sk-admin-of-b-0000000005"
)

// startWithKeys runs a server with five keys: A (namespace a), B (namespaces b and b2), an
// admin key of every namespace, a key granted every namespace, and an admin key of b only.
func startWithKeys(t *testing.T) *testServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys.json")
	keys := `{"keys":[
		{"key":"` + keyA + `","name":"tenant-a","namespaces":["a"]},
		{"key":"` + keyB + `","name":"tenant-b","namespaces":["b","b2"]},
		{"key":"` + keyAdmin + `","name":"ops","namespaces":["*"],"admin":true},
		{"key":"` + keyAll + `","name":"all","namespaces":["*"]},
		{"key":"` + keyAdmB + `","name":"admin-b","namespaces":["b"],"admin":true}]}`
	if err := os.WriteFile(path, []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	return startServer(t, "", "--keys", path)
}

// adminStatus is what an admin key gets on an admin route: 200, or 202 for a manual job run.
func adminStatus(route string) int {
	if route == "POST /v1/admin/jobs/:name/run" {
		return 202
	}
	return 200
}

// sampleBody is a valid body for each route that takes one.
var sampleBody = map[string]string{
	"POST /v1/namespaces/:ns/memories":  `{"kind":"fact","content":"The tide turns at six."}`,
	"POST /v1/namespaces/:ns/recall":    `{"mode":"search","query":"when does the tide turn?"}`,
	"PUT /v1/namespaces/:ns/settings":   `{"rerank":"off"}`,
	"PATCH /v1/namespaces/:ns/settings": `{"rerank":"off"}`,
}

// TestTenantIsolation runs every registered route with every kind of credential: the open
// routes need none, a missing or unknown key is 401, a key used on a namespace it was not
// granted (or a non-admin key on an admin route) is 403, and a granted key gets through.
func TestTenantIsolation(t *testing.T) {
	s := startWithKeys(t)
	open := map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true, "/openapi.yaml": true}
	routes := s.m.api.Routes()
	if len(routes) < 10 {
		t.Fatalf("only %d routes registered", len(routes))
	}
	for _, r := range routes {
		route := r.Method + " " + r.Path
		t.Run(route, func(t *testing.T) {
			path := func(ns string) string {
				return strings.NewReplacer(":ns", ns, ":id", "01HZZZZZZZZZZZZZZZZZZZZZZZ", ":name", "decay-scan").Replace(r.Path)
			}
			body := sampleBody[route]
			if open[r.Path] {
				if status, b := s.do(r.Method, r.Path, "", ""); status != 200 {
					t.Errorf("without a key: %d %s, want 200", status, b)
				}
				return
			}
			type check struct {
				name, path, key string
				status          int // 0: anything but 401 and 403
			}
			checks := []check{
				{"no key", path("a"), "", 401},
				{"unknown key", path("a"), "sk-tenant-a-000000000009", 401},
			}
			switch {
			case strings.HasPrefix(r.Path, "/v1/admin/"):
				checks = append(checks,
					check{"A", path("a"), keyA, 403},
					check{"*", path("a"), keyAll, 403},
					check{"admin", path("a"), keyAdmin, adminStatus(route)},
				)
				// An admin key is admin over its own namespaces; the jobs need "*".
				if r.Path == "/v1/admin/namespaces" {
					checks = append(checks, check{"admin of b", path("a"), keyAdmB, 200})
				} else {
					checks = append(checks, check{"admin of b on a", path("a"), keyAdmB, 403})
				}
			case strings.HasPrefix(r.Path, "/v1/namespaces/:ns/settings"), strings.HasPrefix(r.Path, "/v1/namespaces/:ns/experiments"):
				// Settings and experiments are written by admin keys (--settings-writers
				// admin, the default), not by the keys granted the namespace.
				checks = append(checks,
					check{"A on a", path("a"), keyA, 403},
					check{"A on b", path("b"), keyA, 403},
					check{"* on b", path("b"), keyAll, 403},
					check{"admin on a", path("a"), keyAdmin, 0},
					check{"admin of b on a", path("a"), keyAdmB, 403},
					check{"admin of b on b", path("b"), keyAdmB, 0},
				)
			case strings.Contains(r.Path, ":ns"):
				checks = append(checks,
					check{"A on b", path("b"), keyA, 403},
					check{"B on a", path("a"), keyB, 403},
					check{"admin of b on a", path("a"), keyAdmB, 403},
					check{"admin of * on a", path("a"), keyAdmin, 0}, // an admin key reads and writes what it is granted
					check{"A on a", path("a"), keyA, 0},
					check{"B on b2", path("b2"), keyB, 0},
					check{"* on b", path("b"), keyAll, 0},
				)
			default:
				t.Fatalf("route %s has no authorization check in this test", route)
			}
			for _, c := range checks {
				status, b := s.do(r.Method, c.path, body, c.key)
				if c.status == 0 {
					if status == 401 || status == 403 {
						t.Errorf("%s: %d %s, want it let through", c.name, status, b)
					}
					continue
				}
				if status != c.status {
					t.Errorf("%s: %d %s, want %d", c.name, status, b, c.status)
					continue
				}
				var e api.ErrorResponse
				if status >= 400 && (json.Unmarshal(b, &e) != nil || e.Error.Code == "") {
					t.Errorf("%s: %d %s is not the error shape", c.name, status, b)
				}
			}
		})
	}
}

// TestTenantDataIsolation checks that one tenant's memories never appear to another.
func TestTenantDataIsolation(t *testing.T) {
	s := startWithKeys(t)
	m := s.ingest("a", `{"kind":"fact","content":"Tenant A's secret: the vault code is 4711."}`, keyA)[0]

	// B cannot reach A's memory through its own namespace, by id, list or recall.
	s.must("GET", "/v1/namespaces/b/memories/"+m.ID, "", keyB, http.StatusNotFound, nil)
	s.must("DELETE", "/v1/namespaces/b/memories/"+m.ID, "", keyB, http.StatusNotFound, nil)
	if got := s.list("b", "", keyB); got.Total != 0 {
		t.Errorf("B lists %d memories", got.Total)
	}
	if r := s.recall("b", api.RecallRequest{Mode: "search", Query: "vault code"}, keyB); len(r.Results) != 0 {
		t.Errorf("B recalls %v", resultIDs(r.Results))
	}
	// A still has it, and the all-namespaces key sees it too.
	if r := s.recall("a", api.RecallRequest{Mode: "search", Query: "vault code"}, keyA); len(r.Results) == 0 || r.Results[0].ID != m.ID {
		t.Errorf("A recalls %v, want %s", resultIDs(r.Results), m.ID)
	}
	var got api.Memory
	s.must("GET", "/v1/namespaces/a/memories/"+m.ID, "", keyAll, http.StatusOK, &got)
	if got.Content != m.Content {
		t.Errorf("* key read %q", got.Content)
	}
	var nss api.NamespacesResponse
	s.must("GET", "/v1/admin/namespaces", "", keyAdmin, http.StatusOK, &nss)
	if strings.Join(nss.Namespaces, ",") != "a" {
		t.Errorf("namespaces = %v, want [a]", nss.Namespaces)
	}
}
