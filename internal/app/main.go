// Package app is the salience program: the server (`salience serve`, the default) and the
// operator commands that come with it (metrics, relearn, mcp, report, reembed, version).
// cmd/salience is its main; the developer tools (benchmarks, soak, evaluations) are
// cmd/salience-bench, which reuses the store, embedder and server wiring exported here.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/experiment"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/jobs"
	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/server"
	"github.com/salience-ai/salience/settings"
)

// version is set at build time with
// -ldflags "-X github.com/salience-ai/salience/internal/app.version=v1.2.3".
var version = "dev"

// Exit codes.
const (
	exitError = 1 // the command failed
	exitUsage = 2 // bad flags or configuration
)

// defaultGCPercent replaces Go's GOGC=100 unless GOGC is set: the in-memory indexes are a
// large, long-lived heap (about 1 GB at 100,000 memories) that every collection must mark,
// so collecting when the heap has grown by 4× instead of 2× cuts how often recall shares
// the CPU with the marker — the p95 at 100k memories depends on it — for more memory.
const defaultGCPercent = 400

// Execute runs the program on the process's arguments and returns its exit code. It only
// turns signals into a cancelled context and errors into exit codes; Main does the work, so
// tests run exactly what the binary runs.
func Execute() int {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	setDefaultMemoryLimit()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	m := NewMain()
	if err := m.ParseFlags(ctx, os.Args[1:]); errors.Is(err, flag.ErrHelp) {
		return 0
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "salience:", err)
		return exitUsage
	}
	err := m.Run(ctx)
	if err == nil {
		err = m.Wait(ctx)
	}
	stop() // from here a second signal kills at once instead of waiting for the shutdown
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	switch {
	case errors.Is(err, flag.ErrHelp): // "salience metrics -h" printed its usage
	case err != nil:
		fmt.Fprintln(os.Stderr, "salience:", err)
		return exitError
	}
	return 0
}

// Main is the program: the parsed command and configuration, and the resources `serve`
// holds while it runs.
type Main struct {
	// Command is serve, version or an operator command; Args are what follows an
	// operator command, passed through untouched.
	Command string
	Args    []string
	Config  Config

	Stdout, Stderr io.Writer
	// Getenv reads the environment; tests replace it.
	Getenv func(string) string

	keys   *server.Keyring
	logger *slog.Logger

	// Held by serve.
	store    AppStore
	jobs     *jobs.Scheduler
	api      *server.Server
	http     *http.Server
	ln       net.Listener
	cancel   context.CancelFunc // stops the background index rebuild
	wg       sync.WaitGroup
	failed   chan error // a background failure that must end serve
	closeErr error
	closed   sync.Once
	unlock   func() // releases the data directory's lock (reembed.go)
	memLimit func() // restores the soft memory limit serve set from --index-budget
	// embedderChosen: --embedder or SALIENCE_EMBEDDER was given, so the embedder is the
	// operator's choice and not the default that follows the data (resolveEmbedder).
	embedderChosen bool
}

// NewMain returns a Main writing to the process's stdout and stderr.
func NewMain() *Main {
	return &Main{
		Config: DefaultConfig(),
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
		failed: make(chan error, 2),
	}
}

const usage = `usage: salience [command] [flags]

commands:
  serve     run the HTTP server (the default)
  metrics   print a namespace's engagement metrics (salience metrics --ns NS [--data DIR | --store neo4j ...])
  relearn   rebuild a namespace's relevance model from its event log (salience relearn --ns NS [--data DIR | --store neo4j ...])
  mcp       serve a namespace's MCP tools over stdio, through a running server (salience mcp --ns NS [--server URL])
  report    print an A/B experiment's report from a running server (salience report experiment ID --ns NS [--server URL])
  reembed   re-embed a namespace with the configured embedder, server stopped (salience reembed --ns NS [--data DIR] [--embedder ...])
  version   print the version

Run "salience serve -h" for the server's flags; each flag can also be set with the
environment variable SALIENCE_<FLAG> (e.g. SALIENCE_ADDR), which applies when the flag is
not given.
`

// ParseFlags reads the command and its flags. For serve it also reads the keys file and
// refuses a non-loopback address without keys, so a misconfiguration stops the program
// before it opens anything.
func (m *Main) ParseFlags(ctx context.Context, args []string) error {
	m.Command = "serve"
	if len(args) > 0 && !isFlag(args[0]) {
		m.Command, args = args[0], args[1:]
	}
	switch m.Command {
	case "serve":
	case "metrics", "mcp", "reembed", "relearn", "report":
		m.Args = args
		return nil
	case "version":
		if len(args) > 0 {
			return fmt.Errorf("version takes no arguments, got %q", args)
		}
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(m.Stdout, usage)
		return flag.ErrHelp
	case "eval", "bench", "soak":
		return fmt.Errorf("%s is a developer tool of its own binary now: salience-bench %s (go build ./cmd/salience-bench, or make build-bench)", m.Command, m.Command)
	default:
		fmt.Fprint(m.Stderr, usage)
		return fmt.Errorf("unknown command %q", m.Command)
	}

	fs := flag.NewFlagSet("salience serve", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	m.Config.flagSet(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: salience serve [flags]\n\nflags (environment variable in brackets):")
		fs.VisitAll(func(f *flag.Flag) {
			fmt.Fprintf(fs.Output(), "  --%s [%s] (default %q)\n      %s\n", f.Name, envName(f.Name), f.DefValue, f.Usage)
		})
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected arguments %q", fs.Args())
	}
	if err := ApplyEnv(fs, m.Getenv); err != nil {
		return err
	}
	m.embedderChosen = flagGiven(fs, "embedder")
	if err := m.Config.Validate(); err != nil {
		return err
	}
	if m.Config.KeysFile != "" {
		k, err := server.LoadKeys(m.Config.KeysFile)
		if err != nil {
			return err
		}
		m.keys = k
	}
	return checkListenAddr(m.Config.Addr, m.keys != nil)
}

func isFlag(s string) bool { return len(s) > 1 && s[0] == '-' }

// Run runs the command. For serve it opens the store, starts listening at once (so /healthz
// answers) and loads the search indexes in the background (/readyz turns 200 when done),
// then returns; Wait blocks until the server should stop and Close stops it. Other commands
// run to completion here.
func (m *Main) Run(ctx context.Context) error {
	switch m.Command {
	case "metrics":
		return runMetrics(ctx, m.Args, m.Getenv, m.Stdout, m.Stderr)
	case "relearn":
		return runRelearn(ctx, m.Args, m.Getenv, m.Stdout, m.Stderr)
	case "mcp":
		return runMCP(ctx, m.Args, os.Stdin, nopCloser{m.Stdout}, m.Stderr, m.Getenv)
	case "report":
		return runReport(ctx, m.Args, m.Stdout, m.Stderr, m.Getenv)
	case "reembed":
		return runReembed(ctx, m.Args, m.Getenv, m.Stdout, m.Stderr)
	case "version":
		fmt.Fprintf(m.Stdout, "salience %s (%s, %s/%s)\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	case "serve":
		return m.serve(ctx)
	}
	// ParseFlags accepted a command Run does not know: never start a server instead.
	return fmt.Errorf("command %q has no implementation", m.Command)
}

func (m *Main) serve(ctx context.Context) error {
	c := &m.Config
	level, _ := parseLevel(c.LogLevel)
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		m.logger = slog.New(slog.NewJSONHandler(m.Stderr, opts))
	} else {
		m.logger = slog.New(slog.NewTextHandler(m.Stderr, opts))
	}

	if c.Store.Kind != StoreNeo4j { // the data directory holds the SQLite file
		if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
		// One server per data directory: a second one's writes would be missing from the
		// first one's indexes; and reembed must not rewrite vectors under a server.
		unlock, err := lockData(c.DataDir)
		if errors.Is(err, errDataLocked) {
			return fmt.Errorf("%s is in use: another salience serve or reembed holds %s; one server per data directory (stop it, or give this one another --data)", c.DataDir, lockPath(c.DataDir))
		} else if err != nil {
			return err
		}
		m.unlock = unlock
	}
	st, loadIndexes, dbPath, err := OpenStore(ctx, &c.Store, c.DataDir, m.logger)
	if err != nil {
		return err
	}
	m.store = st
	if c.Store.Kind == StoreSQLite {
		// With an index budget the operator has said how much memory the indexes may take:
		// the soft memory limit follows it instead of 3/4 of the machine, so GOGC=400's
		// garbage from loads and evictions cannot grow the heap far past the budget.
		if lim, restore := FollowIndexBudget(int64(c.Store.IndexBudget), m.Getenv); lim > 0 {
			m.memLimit = restore
			m.logger.Info("memory limit follows the index budget", "index_budget_bytes", int64(c.Store.IndexBudget), "memory_limit_bytes", lim)
		}
	}
	emb, err := NewEmbedder(c)
	if err != nil {
		return err
	}
	// Each namespace keeps the embedder it was embedded with: refuse another before serving.
	if emb, err = resolveEmbedder(ctx, st, emb, c, m.embedderChosen, m.logger); err != nil {
		return err
	}

	// Every consumer of namespace settings reads them through this one cached service.
	sets := settings.New(st, settings.Options{TTL: cacheTTL(c.SettingsTTL)})
	moved, err := sets.MigrateDecayPolicies(ctx)
	if err != nil {
		return fmt.Errorf("moving decay policy overrides into namespace settings: %w", err)
	}
	if len(moved) > 0 {
		m.logger.Info("decay policy overrides moved into namespace settings", "namespaces", moved)
	}
	// Recall asks which experiment a namespace runs through this one cached service too.
	exps := experiment.NewService(st, experiment.Options{TTL: cacheTTL(c.SettingsTTL)})
	sched, policies, err := newScheduler(st, sets, exps, &c.Jobs, m.logger)
	if err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	m.jobs = sched
	// Engagement moves each memory's schedule with its namespace's decay policy, the one the
	// decay jobs read.
	eng := engagement.NewService(st, engagement.ServiceOptions{Policy: policies.For})
	rr, err := newReranker(&c.Rerank, sets, m.logger)
	if err != nil {
		return err
	}
	metrics := indexCollectors(st)
	if rr != nil {
		metrics = append(metrics, rr.Collectors()...)
	}

	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if m.keys == nil && !isLoopbackAddr(ln.Addr()) {
		ln.Close()
		return fmt.Errorf("%w: %s resolved to %s", errOpenWithoutKeys, c.Addr, ln.Addr())
	}
	m.api = server.New(server.Config{
		Ingester:        ingest.New(st, emb, ingest.Options{MaxContentBytes: c.MaxContentBytes}),
		Recaller:        recall.New(st, emb, recall.Options{Reranker: RecallReranker(rr), Settings: sets, Experiments: exps, PredictTTL: cacheTTL(m.Config.PredictTTL)}),
		Settings:        sets,
		Experiments:     exps,
		SettingsWriters: c.SettingsWriters,
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
		Keys:            m.keys,
		Addr:            ln.Addr().String(), // the bound port when --addr asks for :0
		MaxBodyBytes:    c.MaxBodyBytes,
		Logger:          m.logger,
		Collectors:      metrics,
	})

	m.ln = ln
	m.http = &http.Server{
		Handler:           m.api.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(m.logger.Handler(), slog.LevelWarn),
	}

	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.failed <- fmt.Errorf("serve: %w", err)
		}
	}()

	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		start := time.Now()
		if loadIndexes != nil { // the Neo4j store searches in Neo4j: nothing to load
			if err := loadIndexes(rctx); err != nil {
				if rctx.Err() == nil {
					m.failed <- fmt.Errorf("loading the indexes from %s: %w", dbPath, err)
				}
				return
			}
			// The rebuild leaves garbage several times the indexes' size (GOGC=400); return
			// it to the OS now instead of holding it until the scavenger gets round to it
			// (10,000 memories: resident set 354 MB → 119 MB).
			debug.FreeOSMemory()
			m.logger.Info("ready: indexes loaded", "duration_ms", time.Since(start).Milliseconds())
		}
		// The jobs read namespaces from the loaded indexes, so they tick only from here.
		if c.Jobs.Enabled {
			sched.Start()
		}
	}()

	note := "loopback only: no API keys configured"
	if m.keys != nil {
		note = fmt.Sprintf("API keys: %d", m.keys.Len())
	}
	m.logger.Info(fmt.Sprintf("listening on %s (%s)", ln.Addr(), note),
		"addr", ln.Addr().String(), "data", dbPath, "embedder", emb.Name(), "version", buildVersion())
	return nil
}

// NewEmbedder builds the configured embedder.
func NewEmbedder(c *Config) (embed.Embedder, error) {
	if c.Embedder == "static" {
		s, err := embed.NewStatic()
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	if c.Embedder == "openai" {
		e, err := embed.NewOpenAI(embed.OpenAIConfig{BaseURL: c.EmbedURL, APIKey: c.EmbedKey, Model: c.EmbedModel, Dims: c.EmbedDims})
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	return embed.NewLocal(c.EmbedDims), nil
}

// Wait blocks a running serve until ctx is done (a signal) or the server fails in the
// background; it returns that failure, or nil. Other commands return at once.
func (m *Main) Wait(ctx context.Context) error {
	if m.http == nil {
		return nil
	}
	select {
	case <-ctx.Done():
		m.logger.Info("shutting down: finishing in-flight requests", "timeout", m.Config.ShutdownTimeout.String())
		return nil
	case err := <-m.failed:
		return err
	}
}

// Addr returns the address serve listens on (useful with port 0), or "" before Run.
func (m *Main) Addr() string {
	if m.ln == nil {
		return ""
	}
	return m.ln.Addr().String()
}

// Close stops serve gracefully: it stops accepting connections, lets in-flight requests
// finish (up to the shutdown timeout, then cuts them), stops the jobs (a running one
// checkpoints and resumes at the next start), stops the index rebuild and closes the
// store. It is safe to call more than once and after a failed Run.
func (m *Main) Close() error {
	m.closed.Do(func() {
		var errs []error
		if m.http != nil {
			ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
			if err := m.http.Shutdown(ctx); err != nil {
				errs = append(errs, fmt.Errorf("shutdown: %w", err))
				m.http.Close()
			}
			cancel()
		}
		if m.jobs != nil {
			// Running jobs are cancelled, checkpoint and are recorded unfinished; the next
			// start resumes them.
			ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
			if err := m.jobs.Stop(ctx); err != nil {
				errs = append(errs, err)
			}
			cancel()
		}
		if m.cancel != nil {
			m.cancel()
		}
		m.wg.Wait()
		if m.store != nil {
			if err := m.store.Close(); err != nil {
				errs = append(errs, fmt.Errorf("closing the store: %w", err))
			}
		}
		if m.unlock != nil {
			m.unlock()
		}
		if m.memLimit != nil {
			m.memLimit()
		}
		m.closeErr = errors.Join(errs...)
		if m.logger != nil && m.http != nil {
			m.logger.Info("stopped")
		}
	})
	return m.closeErr
}

// buildVersion is the -ldflags version, else the module version Go recorded, else "dev".
func buildVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}

// cacheTTL maps --settings-ttl to the settings and experiment services' TTL option, and
// --predict-ttl to recall's PredictTTL, where 0 means their default and a negative TTL no
// cache.
func cacheTTL(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
