package client

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// LeftOut are the documented operations the client leaves out on purpose, each with why
// (exported for the tests of package client_test).
var LeftOut = map[string]string{
	"GET /metrics":      "Prometheus scrapes it; a bot has no use for it",
	"GET /openapi.yaml": "the document itself",
	"POST /mcp/{ns}":    "MCP clients speak to it (tested in package mcp)",
}

// TestRoutesMatchTheOpenAPIDocument fails when a route is documented and the client has no
// call for it, or the client calls a route the document does not have.
func TestRoutesMatchTheOpenAPIDocument(t *testing.T) {
	b, err := os.ReadFile("../server/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method != "parameters" && method != "summary" && method != "description" {
				documented[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	mine := map[string]bool{}
	for _, r := range routes {
		mine[r.String()] = true
		if !documented[r.String()] {
			t.Errorf("the client calls %s, which openapi.yaml does not document", r)
		}
	}
	for op := range documented {
		if !mine[op] && LeftOut[op] == "" {
			t.Errorf("openapi.yaml documents %s, which the client has no call for", op)
		}
	}
	for op := range LeftOut {
		if mine[op] {
			t.Errorf("%s is both called and listed as left out", op)
		}
	}
}

// TestNoServerCodeInTheImportGraph keeps the client light for bots: no gin, no store, no
// server package, nothing but the standard library and package api.
func TestNoServerCodeInTheImportGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/salience-ai/salience/client").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/salience-ai/salience/api") {
		t.Fatalf("go list -deps printed no api package: %q", deps)
	}
	for _, d := range deps {
		if d != "github.com/salience-ai/salience/api" && d != "github.com/salience-ai/salience/client" {
			t.Errorf("the client imports %s; it must need only the standard library and package api", d)
		}
		if strings.Contains(d, "gin-gonic") {
			t.Errorf("gin is in the client's import graph: %s", d)
		}
	}
}
