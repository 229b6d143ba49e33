// Package testserver runs the real Salience stack — the server's router over an embedded
// SQLite store, the local embedder, ingest, recall, engagement and the maintenance jobs —
// on an httptest server, for the tests of the clients (package client, the MCP tools, the
// example bot). It is wired as internal/app wires `serve`, with the scheduler not ticking
// (jobs run when a test triggers them).
package testserver

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/experiment"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/jobs"
	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/server"
	"github.com/salience-ai/salience/settings"
	"github.com/salience-ai/salience/store/sqlite"
)

// Keys of the keys file Options.WithKeys installs.
const (
	KeyA     = "sk-tenant-a-000000000001" // namespace "a"
	KeyB     = "sk-tenant-b-000000000002" // namespace "b"
	KeyAdmin = "sk-admin-00000000000003"  // admin of every namespace ("*")
	KeyAll   = "sk-every-ns-000000000004" // every namespace, not admin
	// KeyShared reads "a" and the shared memory "shared" (shared-memory recalls).
	KeyShared = "sk-tenant-a-shared-00005"
	// KeyAdminB is admin over namespace "b" only.
	KeyAdminB = "sk-admin-b-0000000000006"
)

const keysFile = `{"keys":[
	{"key":"` + KeyA + `","name":"tenant-a","namespaces":["a"]},
	{"key":"` + KeyB + `","name":"tenant-b","namespaces":["b"]},
	{"key":"` + KeyAdmin + `","name":"ops","namespaces":["*"],"admin":true},
	{"key":"` + KeyAll + `","name":"all","namespaces":["*"]},
	{"key":"` + KeyShared + `","name":"a-with-shared","namespaces":["a","shared"]},
	{"key":"` + KeyAdminB + `","name":"admin-b","namespaces":["b"],"admin":true}]}`

// Options of Start.
type Options struct {
	// WithKeys configures the keys above; without it every request is allowed.
	WithKeys bool
	// SettingsWriters is the server's --settings-writers; "" = admin.
	SettingsWriters string
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// Embedder embeds memories and queries; nil is the local (lexical) embedder.
	Embedder embed.Embedder
	// Now is the clock of ingest, recall, engagement, the jobs and the server; nil = time.Now. A test
	// that replays a conversation sets it so its figures do not depend on the wall clock.
	Now func() time.Time
	// Seed seeds the bandit's Thompson draws; 0 = from the clock.
	Seed uint64
	// DataDir is the data directory, as `serve --data`: the store is its salience.db. ""
	// = a new temporary directory.
	DataDir string
}

// Server is a running stack.
type Server struct {
	*httptest.Server
	API         *server.Server
	Store       *sqlite.Store
	Experiments *experiment.Service
}

// Start runs the stack on opts.DataDir (a new temporary one by default) and stops it when the
// test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dir := opts.DataDir
	if dir == "" {
		dir = t.TempDir()
	}
	st, err := sqlite.Open(filepath.Join(dir, "salience.db"), sqlite.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	emb := opts.Embedder
	if emb == nil {
		emb = embed.NewLocal(0)
	}
	sets := settings.New(st, settings.Options{})
	policies, err := maintenance.NewPolicies("", decay.Params{}, sets, logger)
	if err != nil {
		t.Fatal(err)
	}
	svc := maintenance.New(st, maintenance.Options{Policy: policies.For, Settings: sets, Logger: logger})
	exps := experiment.NewService(st, experiment.Options{})
	var js []jobs.Job
	for _, task := range svc.Tasks() {
		js = append(js, jobs.Job{Name: task.Name, Spec: "@daily", Run: func(ctx context.Context, r *jobs.Run) (int, error) {
			return task.Run(ctx, r)
		}})
	}
	js = append(js, jobs.Job{Name: experiment.JobReportSnapshot, Spec: "@daily", Run: func(ctx context.Context, r *jobs.Run) (int, error) {
		return exps.SnapshotAll(ctx, r.Now())
	}})
	sched, err := jobs.New(jobs.Options{Store: st, Logger: logger, Now: opts.Now}, js...)
	if err != nil {
		t.Fatal(err)
	}
	eng := engagement.NewService(st, engagement.ServiceOptions{Policy: policies.For, Now: opts.Now})
	var keys *server.Keyring
	if opts.WithKeys {
		if keys, err = server.ParseKeys([]byte(keysFile)); err != nil {
			t.Fatal(err)
		}
	}
	api := server.New(server.Config{
		Ingester:        ingest.New(st, emb, ingest.Options{Now: opts.Now}),
		Recaller:        recall.New(st, emb, recall.Options{Settings: sets, Experiments: exps, Now: opts.Now, Seed: opts.Seed}),
		Settings:        sets,
		Experiments:     exps,
		SettingsWriters: opts.SettingsWriters,
		Memories:        st,
		Namespaces:      st,
		Embedder:        embed.Identity(emb),
		Ready:           st.Ready,
		Jobs:            sched,
		Queue:           st,
		Engagement:      eng,
		Reports:         eng,
		Relearner:       eng,
		Thresholds:      maintenance.Thresholds{Store: st},
		Keys:            keys,
		Logger:          logger,
		Now:             opts.Now,
	})
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(func() {
		hs.Close()
		if err := sched.Stop(context.Background()); err != nil {
			t.Errorf("stopping the jobs: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	return &Server{Server: hs, API: api, Store: st, Experiments: exps}
}
