package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/internal/testserver"
)

// TestAdminKeysAreScopedToTheirNamespaces: an admin key is admin only over the namespaces it
// is granted. The admin of b cannot read or change a's settings, run experiments on a,
// relearn a or delete it, nor touch the server-wide jobs, and lists only b; the "*" admin
// can do all of it. Through the real stack, every exchange checked against openapi.yaml.
func TestAdminKeysAreScopedToTheirNamespaces(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{WithKeys: true})
	hc := &http.Client{Transport: testserver.NewValidator(t, nil)}
	call := func(key, method, path, body string) (int, []byte) {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, srv.URL+path, r)
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	const memory = `{"kind":"fact","content":"The launch is on Friday."}`
	if code, b := call(testserver.KeyA, "POST", "/v1/namespaces/a/memories", memory); code != 201 {
		t.Fatalf("storing in a = %d %s", code, b)
	}
	if code, b := call(testserver.KeyB, "POST", "/v1/namespaces/b/memories", memory); code != 201 {
		t.Fatalf("storing in b = %d %s", code, b)
	}
	experiment, _ := json.Marshal(api.ExperimentCreate{Name: "fixed threshold", Variants: []api.Variant{
		{Name: "control", Share: 0.5},
		{Name: "fixed", Share: 0.5, Overrides: api.VariantOverrides{ThresholdPolicy: "fixed:0.6"}},
	}})
	routes := []struct {
		name, method, path, body string
		ok                       int // the status of an admin allowed it
	}{
		{"read settings", "GET", "/v1/namespaces/%s/settings", "", 200},
		{"patch settings", "PATCH", "/v1/namespaces/%s/settings", `{"history_retention_days":30}`, 200},
		{"settings history", "GET", "/v1/namespaces/%s/settings/history", "", 200},
		{"create experiment", "POST", "/v1/namespaces/%s/experiments", string(experiment), 201},
		{"list experiments", "GET", "/v1/namespaces/%s/experiments", "", 200},
		{"relearn", "POST", "/v1/admin/namespaces/%s/relearn", "", 200},
	}

	// The admin of b: refused on a, allowed on b.
	for _, r := range routes {
		code, b := call(testserver.KeyAdminB, r.method, strings.Replace(r.path, "%s", "a", 1), r.body)
		var e api.ErrorResponse
		if code != 403 || json.Unmarshal(b, &e) != nil || e.Error.Code != "forbidden" {
			t.Errorf("admin of b, %s of a = %d %s, want 403 forbidden", r.name, code, b)
		}
		if code, b := call(testserver.KeyAdminB, r.method, strings.Replace(r.path, "%s", "b", 1), r.body); code != r.ok {
			t.Errorf("admin of b, %s of b = %d %s, want %d", r.name, code, b, r.ok)
		}
	}
	for _, p := range []string{"/v1/admin/jobs", "/v1/admin/jobs/decay-scan/runs"} {
		if code, b := call(testserver.KeyAdminB, "GET", p, ""); code != 403 {
			t.Errorf("admin of b, GET %s = %d %s, want 403: the jobs act on every namespace", p, code, b)
		}
	}
	if code, b := call(testserver.KeyAdminB, "DELETE", "/v1/admin/namespaces/a", ""); code != 403 {
		t.Errorf("admin of b, deleting a = %d %s, want 403", code, b)
	}
	var list api.NamespacesResponse
	code, b := call(testserver.KeyAdminB, "GET", "/v1/admin/namespaces", "")
	if code != 200 || json.Unmarshal(b, &list) != nil || !slices.Equal(list.Namespaces, []string{"b"}) {
		t.Errorf("admin of b lists %d %s, want only b", code, b)
	}
	if _, leaked := list.Embedders["a"]; leaked || len(list.Embedders) != 1 {
		t.Errorf("admin of b sees the embedders of %v, want b's alone", list.Embedders)
	}
	// Nothing of a changed: its memory is there, its settings unwritten, no experiment.
	if code, b := call(testserver.KeyA, "GET", "/v1/namespaces/a/memories", ""); code != 200 || !strings.Contains(string(b), "Friday") {
		t.Errorf("a's memories after the refusals = %d %s, want the memory", code, b)
	}
	var st api.Settings
	if code, b := call(testserver.KeyAdmin, "GET", "/v1/namespaces/a/settings", ""); code != 200 || json.Unmarshal(b, &st) != nil || st.Version != 0 {
		t.Errorf("a's settings after the refusals = %d %s, want version 0", code, b)
	}

	// The "*" admin: allowed on a, the jobs, and lists both.
	for _, r := range routes {
		if code, b := call(testserver.KeyAdmin, r.method, strings.Replace(r.path, "%s", "a", 1), r.body); code != r.ok {
			t.Errorf("admin of *, %s of a = %d %s, want %d", r.name, code, b, r.ok)
		}
	}
	if code, b := call(testserver.KeyAdmin, "GET", "/v1/admin/jobs", ""); code != 200 {
		t.Errorf("admin of *, GET /v1/admin/jobs = %d %s, want 200", code, b)
	}
	code, b = call(testserver.KeyAdmin, "GET", "/v1/admin/namespaces", "")
	if code != 200 || json.Unmarshal(b, &list) != nil || !slices.Equal(list.Namespaces, []string{"a", "b"}) {
		t.Errorf("admin of * lists %d %s, want a and b", code, b)
	}
	if code, b := call(testserver.KeyAdmin, "DELETE", "/v1/admin/namespaces/a", ""); code != 200 {
		t.Errorf("admin of *, deleting a = %d %s, want 200", code, b)
	}
}
