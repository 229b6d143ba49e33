package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/neo4j"
	"github.com/salience-ai/salience/store/sqlite"
)

// StoreConfig chooses the store: the embedded SQLite file under --data (the default), or a
// Neo4j 5 database shared by any number of servers.
type StoreConfig struct {
	Kind          string // --store, SALIENCE_STORE: sqlite or neo4j
	Neo4jURI      string // --neo4j-uri, SALIENCE_NEO4J_URI: neo4j://host:7687, neo4j+s://… (Aura), bolt://host:7687
	Neo4jUser     string // --neo4j-user, SALIENCE_NEO4J_USER; empty: no authentication
	Neo4jPassword string // --neo4j-password, SALIENCE_NEO4J_PASSWORD
	Neo4jDatabase string // --neo4j-database, SALIENCE_NEO4J_DATABASE; empty: the user's home database
	// --neo4j-follower-reads, SALIENCE_NEO4J_FOLLOWER_READS: let a cluster's followers serve
	// reads (scale) at the price of reading another server's writes a replication lag late.
	Neo4jFollowerReads bool
	// IndexBudget (--index-budget, SALIENCE_INDEX_BUDGET; sqlite store): when set, each
	// namespace's indexes load on first use and the least recently used are evicted once
	// the loaded ones' estimated size passes it. 0 loads every namespace at start.
	IndexBudget ByteSize
}

// ByteSize is a flag's size in bytes, given as a number with an optional KB, MB or GB
// (powers of 1,024): 500MB, 2GB, 1048576.
type ByteSize int64

func (b *ByteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *ByteSize) Set(v string) error {
	num, mult := strings.ToUpper(strings.TrimSpace(v)), int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return fmt.Errorf("want a size such as 500MB, 2GB or a number of bytes, got %q", v)
	}
	*b = ByteSize(n * mult)
	return nil
}

// Store kinds.
const (
	StoreSQLite = "sqlite"
	StoreNeo4j  = "neo4j"
)

// DefaultStoreConfig is the embedded store.
func DefaultStoreConfig() StoreConfig { return StoreConfig{Kind: StoreSQLite} }

func (s *StoreConfig) flagSet(fs *flag.FlagSet) {
	fs.StringVar(&s.Kind, "store", s.Kind, "store: sqlite (embedded, <data>/salience.db) or neo4j (shared by every server; see --neo4j-uri)")
	fs.StringVar(&s.Neo4jURI, "neo4j-uri", s.Neo4jURI, "neo4j store: server URI, neo4j://host:7687 for a cluster, neo4j+s://id.databases.neo4j.io for Aura, bolt://host:7687 for one server")
	fs.StringVar(&s.Neo4jUser, "neo4j-user", s.Neo4jUser, "neo4j store: user name (empty: no authentication)")
	fs.StringVar(&s.Neo4jPassword, "neo4j-password", s.Neo4jPassword, "neo4j store: password (prefer the environment variable)")
	fs.StringVar(&s.Neo4jDatabase, "neo4j-database", s.Neo4jDatabase, "neo4j store: database name (empty: the user's home database)")
	fs.Var(&s.IndexBudget, "index-budget", "sqlite store: load each namespace's indexes on first use and keep at most about this much of them in memory, least recently used evicted first (e.g. 500MB, 2GB); 0 loads every namespace at start")
	fs.BoolVar(&s.Neo4jFollowerReads, "neo4j-follower-reads", s.Neo4jFollowerReads, "neo4j store: let a cluster's followers serve reads (they may trail other servers' writes by the replication lag); off, everything goes to the leader")
}

func (s *StoreConfig) Validate() error {
	switch s.Kind {
	case StoreSQLite:
		return nil
	case StoreNeo4j:
		if s.Neo4jURI == "" {
			return errors.New("--store neo4j needs --neo4j-uri (e.g. neo4j://localhost:7687)")
		}
		if scheme, _, ok := strings.Cut(s.Neo4jURI, "://"); !ok || !(strings.HasPrefix(scheme, "neo4j") || strings.HasPrefix(scheme, "bolt")) {
			return fmt.Errorf("--neo4j-uri %q: want neo4j://, neo4j+s://, bolt:// or bolt+s://", s.Neo4jURI)
		}
		return nil
	}
	return fmt.Errorf("--store %q: want sqlite or neo4j", s.Kind)
}

// AppStore is what the commands need of a store beyond the contract: whether it can serve
// searches yet, and closing it.
type AppStore interface {
	models.Store
	Ready() bool
	// Each namespace's embedder, resolved against the configured one at start.
	embedderStore
}

// neo4jStore adapts the Neo4j store: it is ready once open (search runs on Neo4j's own
// indexes), and /readyz checks that Neo4j still answers.
type neo4jStore struct{ *neo4j.Store }

func (s neo4jStore) Ready() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.Ping(ctx) == nil
}

// OpenStore opens the configured store. For SQLite, load (non-nil) loads its in-memory
// indexes, which serve runs in the background; the Neo4j store has nothing to load. where
// names the store for logs.
func OpenStore(ctx context.Context, sc *StoreConfig, dataDir string, logger *slog.Logger) (st AppStore, load func(context.Context) error, where string, err error) {
	if sc.Kind == StoreNeo4j {
		ns, err := neo4j.Open(ctx, neo4j.Options{URI: sc.Neo4jURI, User: sc.Neo4jUser, Password: sc.Neo4jPassword,
			Database: sc.Neo4jDatabase, FollowerReads: sc.Neo4jFollowerReads, Logger: logger})
		if err != nil {
			return nil, nil, "", fmt.Errorf("opening Neo4j at %s: %w", sc.Neo4jURI, err)
		}
		return neo4jStore{ns}, nil, sc.Neo4jURI, nil
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, nil, "", fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dataDir, DatabaseFile)
	s, err := sqlite.Open(path, sqlite.Options{Logger: logger, IndexBudget: int64(sc.IndexBudget)})
	if err != nil {
		return nil, nil, "", fmt.Errorf("opening %s: %w", path, err)
	}
	return s, s.Rebuild, path, nil
}

// StoreFlags declares --store and the --neo4j-* flags on a sub-command's flag set (bench,
// eval), with the SALIENCE_* environment as defaults.
func StoreFlags(fs *flag.FlagSet) *StoreConfig {
	sc := DefaultStoreConfig()
	sc.flagSet(fs)
	return &sc
}

// storeFlagNames are the flags StoreFlags declares.
var storeFlagNames = []string{"store", "neo4j-uri", "neo4j-user", "neo4j-password", "neo4j-database", "neo4j-follower-reads", "index-budget"}

// FinishStoreFlags applies the environment to the store flags not given, and validates.
func FinishStoreFlags(fs *flag.FlagSet, sc *StoreConfig) error {
	if err := applyEnvTo(fs, os.Getenv, storeFlagNames...); err != nil {
		return err
	}
	return sc.Validate()
}

// applyEnvTo sets each named flag not given from its SALIENCE_* variable, as serve does.
func applyEnvTo(fs *flag.FlagSet, getenv func(string) string, names ...string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, name := range names {
		if v := getenv(envName(name)); v != "" && !given[name] {
			if err := fs.Set(name, v); err != nil {
				return fmt.Errorf("%s=%q: %w", envName(name), v, err)
			}
		}
	}
	return nil
}

// dataFlags are the store flags of an operator command that opens the store itself (metrics,
// relearn): --data and --store with the --neo4j-* flags, read from the environment as serve
// reads them (SALIENCE_DATA, SALIENCE_STORE, SALIENCE_NEO4J_*), so a command finds the store
// the server in the same environment uses.
type dataFlags struct {
	dir   string
	store *StoreConfig
}

func declareDataFlags(fs *flag.FlagSet) *dataFlags {
	d := &dataFlags{store: StoreFlags(fs)}
	fs.StringVar(&d.dir, "data", DefaultDataDir, "data directory of the sqlite store; the database is <data>/"+DatabaseFile)
	return d
}

// open applies the environment, validates and opens the store without loading its
// in-memory indexes (the commands read through SQL). A missing SQLite database is an error
// rather than a new empty one: a mistyped --data must not look like an empty namespace.
func (d *dataFlags) open(ctx context.Context, fs *flag.FlagSet, getenv func(string) string) (AppStore, error) {
	if err := applyEnvTo(fs, getenv, append([]string{"data"}, storeFlagNames...)...); err != nil {
		return nil, err
	}
	if err := d.store.Validate(); err != nil {
		return nil, err
	}
	if d.store.Kind == StoreSQLite {
		path := filepath.Join(d.dir, DatabaseFile)
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("no database at %s: %w", path, err)
		}
	}
	st, _, _, err := OpenStore(ctx, d.store, d.dir, slog.New(slog.DiscardHandler))
	return st, err
}

// indexCollectors are the Prometheus metrics of a store's in-memory indexes (none for a
// store without them): with --index-budget, how much is loaded and what first uses cost.
func indexCollectors(st AppStore) []prometheus.Collector {
	is, ok := st.(interface{ IndexStats() sqlite.IndexStats })
	if !ok {
		return nil
	}
	gauge := func(name, help string, f func(sqlite.IndexStats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return f(is.IndexStats()) })
	}
	counter := func(name, help string, f func(sqlite.IndexStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return f(is.IndexStats()) })
	}
	return []prometheus.Collector{
		gauge("salience_index_budget_bytes", "The in-memory index budget (--index-budget); 0: every namespace loaded at start.",
			func(s sqlite.IndexStats) float64 { return float64(s.Budget) }),
		gauge("salience_index_bytes", "Estimated size of the namespaces loaded on demand.",
			func(s sqlite.IndexStats) float64 { return float64(s.Bytes) }),
		gauge("salience_index_namespaces_loaded", "Namespaces whose indexes are in memory.",
			func(s sqlite.IndexStats) float64 { return float64(s.Loaded) }),
		counter("salience_index_loads_total", "Namespaces loaded on first use (or again after eviction).",
			func(s sqlite.IndexStats) float64 { return float64(s.Loads) }),
		counter("salience_index_evictions_total", "Namespaces evicted to keep within the index budget.",
			func(s sqlite.IndexStats) float64 { return float64(s.Evictions) }),
		gauge("salience_index_first_use_mean_seconds", "Mean time a namespace's load added to its first use.",
			func(s sqlite.IndexStats) float64 { return s.LoadMeanMS / 1000 }),
		gauge("salience_index_first_use_max_seconds", "Longest time a namespace's load added to its first use.",
			func(s sqlite.IndexStats) float64 { return s.LoadMaxMS / 1000 }),
	}
}

// Quiet is the logger of commands that open a store for a moment (reembed, the benchmarks):
// warnings and errors only, on stderr.
func Quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
