package app

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// parse runs ParseFlags on a fresh Main with the given environment.
func parse(t *testing.T, env map[string]string, args ...string) (*Main, error) {
	t.Helper()
	m := NewMain()
	m.Stdout, m.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	m.Getenv = func(k string) string { return env[k] }
	return m, m.ParseFlags(context.Background(), args)
}

func TestDefaults(t *testing.T) {
	for _, args := range [][]string{nil, {"serve"}} {
		m, err := parse(t, nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		// The defaults docs/reference.md's configuration tables document, as literals: a test that
		// compared with the constants the code uses could not catch a changed default.
		want := Config{
			Addr: "127.0.0.1:7700", DataDir: "./data", MaxBodyBytes: 16 << 20,
			MaxContentBytes: 64 << 10, Embedder: "static", LogLevel: "info", LogFormat: "text",
			ShutdownTimeout: 15 * time.Second, Jobs: JobsConfig{
				Enabled: true, DecayScan: "@every 1h", EdgeDecay: "@daily", DismissalCooldown: "@weekly",
				ImplicitIgnore: "@every 5m", BanditUpkeep: "@every 1m", ReportSnapshot: "10 0 * * *", PruneHistory: "30 1 * * *", IgnoreAfter: 30 * time.Minute, ResurfaceCap: 100, Policy: "fsrs",
				Threshold: 0.7, TargetRetention: 0.9, DismissCooldown: 168 * time.Hour, LeaseTTL: time.Minute,
			},
			Rerank:          RerankConfig{Policy: "off", Model: "claude-haiku-4-5", TopN: 20},
			Store:           StoreConfig{Kind: "sqlite"},
			SettingsWriters: "admin", SettingsTTL: 10 * time.Second, PredictTTL: 30 * time.Second,
		}
		if m.Command != "serve" || m.Config != want {
			t.Errorf("ParseFlags(%q) = %q %+v, want serve %+v", args, m.Command, m.Config, want)
		}
	}
}

func TestFlagsAndEnvironment(t *testing.T) {
	env := map[string]string{
		"SALIENCE_ADDR":              "127.0.0.1:9999", // loses to the flag
		"SALIENCE_DATA":              "/tmp/salience-env",
		"SALIENCE_MAX_CONTENT_BYTES": "1000",
		"SALIENCE_MAX_BODY_BYTES":    "2048",
		"SALIENCE_LOG_LEVEL":         "debug",
		"SALIENCE_SHUTDOWN_TIMEOUT":  "3s",
		"OPENAI_API_KEY":             "sk-from-openai-env",
	}
	m, err := parse(t, env, "serve", "--addr", "127.0.0.1:1234", "--log-format=json")
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if c.Addr != "127.0.0.1:1234" || c.DataDir != "/tmp/salience-env" || c.MaxContentBytes != 1000 || c.MaxBodyBytes != 2048 ||
		c.LogLevel != "debug" || c.LogFormat != "json" || c.ShutdownTimeout != 3*time.Second || c.EmbedKey != "sk-from-openai-env" {
		t.Errorf("config = %+v", c)
	}

	// SALIENCE_EMBED_KEY wins over OPENAI_API_KEY; the flag wins over both.
	env["SALIENCE_EMBED_KEY"] = "sk-from-salience-env"
	if m, _ := parse(t, env); m.Config.EmbedKey != "sk-from-salience-env" {
		t.Errorf("embed key = %q, want the SALIENCE_EMBED_KEY one", m.Config.EmbedKey)
	}
	if m, _ := parse(t, env, "--embed-key", "sk-flag"); m.Config.EmbedKey != "sk-flag" {
		t.Errorf("embed key = %q, want the flag's", m.Config.EmbedKey)
	}
	// Flags without the serve command mean serve.
	if m, _ := parse(t, nil, "--addr", "127.0.0.1:1"); m.Command != "serve" || m.Config.Addr != "127.0.0.1:1" {
		t.Errorf("bare flags: %q %q", m.Command, m.Config.Addr)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"bad env number", map[string]string{"SALIENCE_MAX_BODY_BYTES": "lots"}, nil, "SALIENCE_MAX_BODY_BYTES"},
		{"bad flag number", nil, []string{"--max-content-bytes", "x"}, "max-content-bytes"},
		{"zero body", nil, []string{"--max-body-bytes", "0"}, "--max-body-bytes"},
		{"unknown flag", nil, []string{"--adr", "x"}, "adr"},
		{"bad addr", nil, []string{"--addr", "7700"}, "--addr"},
		{"bad embedder", nil, []string{"--embedder", "magic"}, "--embedder"},
		{"openai without model", nil, []string{"--embedder", "openai", "--embed-dims", "768"}, "--embed-model"},
		{"openai without dims", nil, []string{"--embedder", "openai", "--embed-model", "m"}, "--embed-dims"},
		{"static with other dims", nil, []string{"--embedder", "static", "--embed-dims", "384"}, "--embed-dims"},
		{"bad log level", nil, []string{"--log-level", "loud"}, "--log-level"},
		{"missing keys file", nil, []string{"--keys", "/nonexistent/keys.json"}, "keys file"},
		{"stray argument", nil, []string{"serve", "extra"}, "unexpected arguments"},
		{"unknown command", nil, []string{"serv"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.env, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestLoopbackOnlyWithoutKeys(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(keys, []byte(`{"keys":[{"key":"sk-0123456789abcdef","namespaces":["*"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr   string
		keys   bool
		refuse bool
	}{
		{"127.0.0.1:0", false, false},
		{"127.0.0.2:7700", false, false},
		{"[::1]:0", false, false},
		{"localhost:0", false, false},
		{"0.0.0.0:0", false, true},
		{"0.0.0.0:7701", false, true},
		{":7700", false, true},
		{"[::]:0", false, true},
		{"10.1.2.3:7700", false, true},
		{"salience.example:7700", false, true},
		{"0.0.0.0:0", true, false},
		{":7700", true, false},
	}
	for _, tt := range tests {
		args := []string{"serve", "--addr", tt.addr}
		if tt.keys {
			args = append(args, "--keys", keys)
		}
		_, err := parse(t, nil, args...)
		if !tt.refuse {
			if err != nil {
				t.Errorf("%s (keys %v): %v", tt.addr, tt.keys, err)
			}
			continue
		}
		if !errors.Is(err, errOpenWithoutKeys) || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "--keys") {
			t.Errorf("%s without keys: err = %v, want a refusal that mentions loopback and --keys", tt.addr, err)
		}
	}
}

func TestSubcommands(t *testing.T) {
	m, err := parse(t, nil, "metrics", "--ns", "x")
	if err != nil || m.Command != "metrics" || strings.Join(m.Args, " ") != "--ns x" {
		t.Errorf("metrics: %v %q %q", err, m.Command, m.Args)
	}
	// The developer tools are salience-bench's: the server binary says where they went.
	for _, dev := range []string{"eval", "bench", "soak"} {
		if _, err := parse(t, nil, dev, "x"); err == nil || !strings.Contains(err.Error(), "salience-bench "+dev) {
			t.Errorf("%s: %v, want an error pointing to salience-bench", dev, err)
		}
	}
	m, err = parse(t, nil, "version")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out := m.Stdout.(*bytes.Buffer).String(); !strings.HasPrefix(out, "salience ") || !strings.Contains(out, "go1.") {
		t.Errorf("version printed %q", out)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close after version: %v", err)
	}
	if _, err := parse(t, nil, "help"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("help: err = %v, want flag.ErrHelp", err)
	}
	if _, err := parse(t, nil, "serve", "-h"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("serve -h: err = %v, want flag.ErrHelp", err)
	}
}

// TestStoreFlagsAndEnvironment covers --store and the --neo4j-* flags with their SALIENCE_*
// variables: the environment is read when a flag is not given, a flag wins over it, and a
// Neo4j store without a usable URI is refused before anything is opened.
func TestStoreFlagsAndEnvironment(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    StoreConfig // when wantErr is empty
		wantErr string
	}{
		{name: "default", want: StoreConfig{Kind: "sqlite"}},
		{name: "neo4j by flags", args: []string{"--store", "neo4j", "--neo4j-uri", "neo4j://db:7687", "--neo4j-user", "u",
			"--neo4j-password", "p", "--neo4j-database", "mem", "--neo4j-follower-reads"},
			want: StoreConfig{Kind: "neo4j", Neo4jURI: "neo4j://db:7687", Neo4jUser: "u", Neo4jPassword: "p", Neo4jDatabase: "mem", Neo4jFollowerReads: true}},
		{name: "neo4j by environment", env: map[string]string{"SALIENCE_STORE": "neo4j", "SALIENCE_NEO4J_URI": "neo4j+s://x.databases.neo4j.io",
			"SALIENCE_NEO4J_USER": "neo4j", "SALIENCE_NEO4J_PASSWORD": "secret", "SALIENCE_NEO4J_DATABASE": "neo4j", "SALIENCE_NEO4J_FOLLOWER_READS": "true"},
			want: StoreConfig{Kind: "neo4j", Neo4jURI: "neo4j+s://x.databases.neo4j.io", Neo4jUser: "neo4j", Neo4jPassword: "secret", Neo4jDatabase: "neo4j", Neo4jFollowerReads: true}},
		{name: "flag wins over environment", env: map[string]string{"SALIENCE_STORE": "neo4j"}, args: []string{"--store", "sqlite"},
			want: StoreConfig{Kind: "sqlite"}},
		{name: "environment URI with flag store", env: map[string]string{"SALIENCE_NEO4J_URI": "bolt+s://one:7687"}, args: []string{"--store", "neo4j"},
			want: StoreConfig{Kind: "neo4j", Neo4jURI: "bolt+s://one:7687"}},
		{name: "bolt", args: []string{"--store", "neo4j", "--neo4j-uri", "bolt://localhost:7687"},
			want: StoreConfig{Kind: "neo4j", Neo4jURI: "bolt://localhost:7687"}},
		{name: "neo4j without URI", args: []string{"--store", "neo4j"}, wantErr: "--store neo4j needs --neo4j-uri"},
		{name: "environment neo4j without URI", env: map[string]string{"SALIENCE_STORE": "neo4j"}, wantErr: "--store neo4j needs --neo4j-uri"},
		{name: "http scheme", args: []string{"--store", "neo4j", "--neo4j-uri", "http://db:7474"}, wantErr: `--neo4j-uri "http://db:7474": want neo4j://`},
		{name: "no scheme", env: map[string]string{"SALIENCE_STORE": "neo4j", "SALIENCE_NEO4J_URI": "db:7687"}, wantErr: `--neo4j-uri "db:7687": want neo4j://`},
		{name: "unknown store", env: map[string]string{"SALIENCE_STORE": "postgres"}, wantErr: `--store "postgres": want sqlite or neo4j`},
		{name: "bad follower reads", env: map[string]string{"SALIENCE_NEO4J_FOLLOWER_READS": "maybe"}, wantErr: "SALIENCE_NEO4J_FOLLOWER_READS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parse(t, tt.env, append([]string{"serve"}, tt.args...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Config.Store != tt.want {
				t.Errorf("store config = %+v, want %+v", m.Config.Store, tt.want)
			}
		})
	}
}

// --settings-ttl: the default is the services' 10 s, 0 turns the cache off (a negative TTL
// for the services), and a negative flag is refused.
func TestSettingsTTLFlag(t *testing.T) {
	m, err := parse(t, map[string]string{"SALIENCE_SETTINGS_TTL": "0s"}, "serve")
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.SettingsTTL != 0 || cacheTTL(m.Config.SettingsTTL) >= 0 {
		t.Errorf("SALIENCE_SETTINGS_TTL=0s: %v → service TTL %v, want 0 → negative (no cache)", m.Config.SettingsTTL, cacheTTL(m.Config.SettingsTTL))
	}
	if got := cacheTTL(3 * time.Second); got != 3*time.Second {
		t.Errorf("cacheTTL(3s) = %v", got)
	}
	if _, err := parse(t, nil, "serve", "--settings-ttl", "-1s"); err == nil || !strings.Contains(err.Error(), "--settings-ttl") {
		t.Errorf("--settings-ttl -1s: %v, want an error naming the flag", err)
	}
	// --predict-ttl the same way: 0 rebuilds the prediction models on every call.
	m, err = parse(t, map[string]string{"SALIENCE_PREDICT_TTL": "0s"}, "serve")
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.PredictTTL != 0 || cacheTTL(m.Config.PredictTTL) >= 0 {
		t.Errorf("SALIENCE_PREDICT_TTL=0s: %v → recall TTL %v, want 0 → negative", m.Config.PredictTTL, cacheTTL(m.Config.PredictTTL))
	}
	if m, err := parse(t, nil, "serve", "--predict-ttl", "2m"); err != nil || m.Config.PredictTTL != 2*time.Minute {
		t.Errorf("--predict-ttl 2m: %v, %v", m.Config.PredictTTL, err)
	}
	if _, err := parse(t, nil, "serve", "--predict-ttl", "-1s"); err == nil || !strings.Contains(err.Error(), "--predict-ttl") {
		t.Errorf("--predict-ttl -1s: %v, want an error naming the flag", err)
	}
}
