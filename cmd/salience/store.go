package main

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
	IndexBudget byteSize
}

// byteSize is a flag's size in bytes, given as a number with an optional KB, MB or GB
// (powers of 1,024): 500MB, 2GB, 1048576.
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(v string) error {
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
	*b = byteSize(n * mult)
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

func (s *StoreConfig) validate() error {
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

// appStore is what the commands need of a store beyond the contract: whether it can serve
// searches yet, and closing it.
type appStore interface {
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

// openStore opens the configured store. For SQLite, load (non-nil) loads its in-memory
// indexes, which serve runs in the background; the Neo4j store has nothing to load. where
// names the store for logs.
func openStore(ctx context.Context, sc *StoreConfig, dataDir string, logger *slog.Logger) (st appStore, load func(context.Context) error, where string, err error) {
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

// storeFlags declares --store and the --neo4j-* flags on a sub-command's flag set (bench,
// eval), with the SALIENCE_* environment as defaults.
func storeFlags(fs *flag.FlagSet) *StoreConfig {
	sc := DefaultStoreConfig()
	sc.flagSet(fs)
	return &sc
}

// finishStoreFlags applies the environment to the store flags not given, and validates.
func finishStoreFlags(fs *flag.FlagSet, sc *StoreConfig) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, name := range []string{"store", "neo4j-uri", "neo4j-user", "neo4j-password", "neo4j-database", "neo4j-follower-reads", "index-budget"} {
		if v := os.Getenv(envName(name)); v != "" && !given[name] {
			if err := fs.Set(name, v); err != nil {
				return err
			}
		}
	}
	return sc.validate()
}

// indexCollectors are the Prometheus metrics of a store's in-memory indexes (none for a
// store without them): with --index-budget, how much is loaded and what first uses cost.
func indexCollectors(st appStore) []prometheus.Collector {
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
		gauge("salience_conversation_cache_states", "Conversation states cached (those used in the last 15 to 30 minutes, within the cache's bytes).",
			func(s sqlite.IndexStats) float64 { return float64(s.ConversationStates) }),
		gauge("salience_conversation_cache_bytes", "Approximate bytes of the cached conversation states (at most 32 MB).",
			func(s sqlite.IndexStats) float64 { return float64(s.ConversationBytes) }),
	}
}
