package app

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/salience-ai/salience/store/sqlite"
)

// runWithEnv runs a command line through Main with env as the whole environment.
func runWithEnv(env map[string]string, args ...string) (string, error) {
	var out bytes.Buffer
	m := NewMain()
	m.Stdout, m.Stderr = &out, &out
	m.Getenv = func(k string) string { return env[k] }
	err := m.ParseFlags(context.Background(), args)
	if err == nil {
		err = m.Run(context.Background())
	}
	m.Close()
	return out.String(), err
}

// TestStoreCommandsTakeTheServersStoreSettings: metrics and relearn open the store serve
// would open in the same environment — SALIENCE_DATA, SALIENCE_STORE — and take --store.
func TestStoreCommandsTakeTheServersStoreSettings(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, DatabaseFile), sqlite.Options{Logger: Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, cmd := range []string{"metrics", "relearn"} {
		if out, err := runWithEnv(map[string]string{"SALIENCE_DATA": dir}, cmd, "--ns", "a"); err != nil || !strings.Contains(out, "namespace a") {
			t.Errorf("%s with SALIENCE_DATA: %v\n%s", cmd, err, out)
		}
		// The flag wins over the environment, as for serve.
		if _, err := runWithEnv(map[string]string{"SALIENCE_DATA": dir}, cmd, "--ns", "a", "--data", filepath.Join(dir, "nowhere")); err == nil || !strings.Contains(err.Error(), "no database at "+filepath.Join(dir, "nowhere")) {
			t.Errorf("%s --data over SALIENCE_DATA: %v, want no database at the flag's directory", cmd, err)
		}
		for _, c := range []struct {
			env  map[string]string
			args []string
		}{
			{nil, []string{cmd, "--ns", "a", "--store", "neo4j"}},
			{map[string]string{"SALIENCE_STORE": "neo4j"}, []string{cmd, "--ns", "a"}},
		} {
			if _, err := runWithEnv(c.env, c.args...); err == nil || !strings.Contains(err.Error(), "--store neo4j needs --neo4j-uri") {
				t.Errorf("%s %v with %v: %v, want the Neo4j store asked for", cmd, c.args, c.env, err)
			}
		}
	}
}

// TestServerCommandsTakeServer: every command that talks to a server takes --server and
// SALIENCE_URL; mcp's old --url still works.
func TestServerCommandsTakeServer(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"--ns", "a", "--server", "http://127.0.0.1:1"}, nil},
		{[]string{"--ns", "a", "--url", "http://127.0.0.1:1"}, nil},
		{[]string{"--ns", "a"}, map[string]string{"SALIENCE_URL": "http://127.0.0.1:1"}},
	} {
		var stderr bytes.Buffer
		err := runMCP(context.Background(), c.args, io.NopCloser(strings.NewReader("")), nopCloser{io.Discard}, &stderr, func(k string) string { return c.env[k] })
		if err != nil || !strings.Contains(stderr.String(), `namespace "a" on http://127.0.0.1:1`) {
			t.Errorf("mcp %q with %v: %v, %q; want it to use http://127.0.0.1:1", c.args, c.env, err, stderr.String())
		}
	}
	_, err := runWithEnv(nil, "report", "experiment", "01M8", "--ns", "a", "--server", "http://127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("report --server: %v, want a failure to reach http://127.0.0.1:1", err)
	}
}
