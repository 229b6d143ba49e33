// Package sqlite is Salience's embedded default store (DESIGN §9.1): one SQLite file in WAL
// mode is the system of record, and search runs on in-memory indexes (package index) that
// Rebuild loads from it and every write updates after it commits.
//
// Writers are serialized: one write connection and a mutex that also orders the in-memory
// updates exactly like the commits. Readers use a small pool of their own connections.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/salience-ai/salience/models"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Options configure a Store; zero values take the defaults.
type Options struct {
	// Now is the store's clock, used only to stamp its own records (migrations). Default time.Now.
	Now func() time.Time
	// Logger receives migration and rebuild messages. Default slog.Default().
	Logger *slog.Logger
	// ReadConns is the size of the read pool. Default 4.
	ReadConns int
	// IndexBudget, when positive, loads each namespace's indexes and caches on first use
	// instead of all of them in Rebuild, and evicts the least recently used namespaces once
	// their estimated size passes this many bytes (lazy.go). 0 loads everything up front.
	IndexBudget int64
}

// busyTimeout is how long a connection waits on another process's lock before failing with
// SQLITE_BUSY; within one process the write mutex already serializes writers.
const busyTimeout = 10 * time.Second

// Store is the SQLite store. It implements models.Store.
type Store struct {
	path string
	wdb  *sql.DB // exactly one connection: the writer
	rdb  *sql.DB // the read pool
	now  func() time.Time
	log  *slog.Logger

	// wmu serializes write transactions and the in-memory updates that follow their
	// commits, so the indexes see changes in commit order; Rebuild holds it too.
	wmu sync.Mutex

	surfacings surfacingGroup // group commit of RecordSurfacings (surfacing_group.go)

	lazy lazyState // namespaces loaded on demand under a budget (lazy.go), when budget > 0

	mu     sync.RWMutex      // guards spaces and the maps inside each space
	spaces map[string]*space // in-memory state per namespace, valid when ready
	ready  atomic.Bool
	// graphSeq numbers the graphs' versions (space.graphVer), store-wide.
	graphSeq atomic.Uint64

	cdb             *sql.DB // one connection for background checkpoints
	stopCheckpoints context.CancelFunc
	checkpoints     sync.WaitGroup
	ckpt            checkpointStats
	postponedInRow  int          // rewinds readers postponed since the last one done; checkpointer only
	commits         atomic.Int64 // write transactions committed: the checkpointer's idle test
	// unfolded counts the surfacings this process stored since it last folded them into
	// the counters (surfaced.go); it starts at 1, for what an earlier process left.
	unfolded atomic.Int64
	folding  atomic.Bool // a background fold runs (surfaced.go)
	// readWarned is when settleRead last logged a failure (unix nanoseconds).
	readWarned atomic.Int64
	states     stateCache // GetState's (state.go)
	pageSize   int
	closed     bool // guarded by wmu

	// prepared holds the writer connection's prepared statements by SQL text (see wtx);
	// guarded by wmu.
	prepared map[string]*sql.Stmt

	// convs caches conversation states, written through by RecordSurfacings: recall reads
	// its conversation's state on every turn (convcache.go).
	convs convCache
}

func (s *Store) cacheConversation(c *models.ConversationState) { s.convs.put(c) }

func (s *Store) cachedConversation(ns, id string) *models.ConversationState {
	return s.convs.get(ns, id)
}

var _ models.Store = (*Store)(nil)

// Open opens (creating when missing) the database at path and applies pending migrations.
// It does not load the search indexes: call Rebuild before serving searches.
func Open(path string, opts Options) (*Store, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("sqlite: invalid database path %q", path)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ReadConns <= 0 {
		opts.ReadConns = 4
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("sqlite: create directory: %w", err)
	}
	pragmas := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=temp_store(MEMORY)",
		busyTimeout.Milliseconds())
	// BEGIN IMMEDIATE takes the write lock up front, so a transaction never fails half-way
	// on a lock upgrade if another process writes the file.
	// journal_size_limit: see checkpoint.go. The writer keeps 16 MiB of pages (SQLite's
	// default is 2 MiB): engagement and surfacing writes land on pages spread over the
	// surfacings, edges and memories tables, and with the default most of them were read
	// back with a syscall each (bench engagement: ~5,400 → ~6,100 events/s). The soak's RSS
	// check still passes (end / first third 1.02); 32 MiB did not (1.11).
	wdb, err := sql.Open("sqlite", path+"?"+pragmas+fmt.Sprintf("&_pragma=wal_autocheckpoint(0)&_pragma=journal_size_limit(%d)&_pragma=cache_size(-16384)&_txlock=immediate", maxWAL))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	s := &Store{path: path, wdb: wdb, now: opts.Now, log: opts.Logger, spaces: map[string]*space{},
		prepared: map[string]*sql.Stmt{}, lazy: lazyState{budget: max(opts.IndexBudget, 0)}}
	s.unfolded.Store(1)
	// The writer creates the file and switches it to WAL before any reader opens it.
	if err := s.migrate(context.Background()); err != nil {
		wdb.Close()
		return nil, err
	}
	rdb, err := sql.Open("sqlite", path+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	rdb.SetMaxOpenConns(opts.ReadConns)
	rdb.SetMaxIdleConns(opts.ReadConns)
	rdb.SetConnMaxLifetime(0)
	rdb.SetConnMaxIdleTime(0)
	if err := rdb.Ping(); err != nil {
		wdb.Close()
		rdb.Close()
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	s.rdb = rdb
	if err := wdb.QueryRow(`PRAGMA page_size`).Scan(&s.pageSize); err != nil {
		wdb.Close()
		rdb.Close()
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	// Checkpoints run in the background (checkpoint.go), never in a request's commit (the
	// writer has wal_autocheckpoint off): an automatic checkpoint copies and syncs the WAL
	// inside whichever commit crosses 1,000 pages, which set recall's p95 at 100k memories.
	cdb, err := sql.Open("sqlite", path+"?"+pragmas)
	if err != nil {
		wdb.Close()
		rdb.Close()
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	cdb.SetMaxOpenConns(1)
	s.cdb = cdb
	ctx, cancel := context.WithCancel(context.Background())
	s.stopCheckpoints = cancel
	s.checkpoints.Add(1)
	go s.checkpointLoop(ctx)
	if err := s.importJournal(context.Background(), path+"-surfacings"); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database connections.
func (s *Store) Close() error {
	// The checkpointer stops first: it takes wmu itself to reset the WAL.
	s.stopCheckpoints()
	s.checkpoints.Wait()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.ready.Store(false)
	for _, st := range s.prepared {
		st.Close()
	}
	s.closeLazyRaw()
	// A last full checkpoint leaves the data in the file and the WAL empty.
	_, _, cerr := s.checkpointWaiting(context.Background(), "TRUNCATE", busyTimeout)
	return errors.Join(cerr, s.cdb.Close(), s.rdb.Close(), s.wdb.Close())
}

// migrate applies the embedded migrations not yet recorded in the migrations table, in name
// order, each in its own transaction.
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.wdb.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS migrations (name TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("sqlite: create migrations table: %w", err)
	}
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("sqlite: list migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := s.migrateFile(ctx, name); err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
	}
	return nil
}

func (s *Store) migrateFile(ctx context.Context, name string) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations WHERE name = ?`, name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	body, err := fs.ReadFile(migrationFS, name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO migrations (name, applied_at) VALUES (?, ?)`, name, s.now().UnixNano()); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.log.Info("sqlite: applied migration", "name", name, "path", s.path)
	return nil
}

// Migrations returns the names of the applied migrations, in order.
func (s *Store) Migrations(ctx context.Context) ([]string, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT name FROM migrations ORDER BY name`)
	if err != nil {
		return nil, wrap(err, "list migrations")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, wrap(err, "list migrations")
		}
		out = append(out, n)
	}
	return out, wrap(rows.Err(), "list migrations")
}

// wrap translates a driver error into a models error by SQLite result code (never by message
// text) and adds context. Errors that already carry a models code pass through unchanged.
// The driver's error stays in the chain for the log; clients see only the models message.
func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	var me *models.Error
	if errors.As(err, &me) {
		return err
	}
	if code, ok := resultCode(err); ok {
		switch code & 0xff { // the primary code of an extended one
		case sqlite3.SQLITE_CONSTRAINT:
			if code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || code == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
				return &models.Error{Code: models.ECONFLICT, Message: what + ": the object exists"}
			}
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("sqlite: %s: %w: %w", what, models.Errorf(models.EUNAVAILABLE, "the database is busy"), err)
		case sqlite3.SQLITE_FULL:
			return fmt.Errorf("sqlite: %s: %w: %w", what, errDiskFull, err)
		case sqlite3.SQLITE_IOERR:
			return fmt.Errorf("sqlite: %s: %w: %w", what, errDiskIO, err)
		}
	}
	return fmt.Errorf("sqlite: %s: %w", what, err)
}

// Writes that fail for want of disk are refused as unavailable (503): nothing was written,
// reads still work, and the same write succeeds once space returns.
var (
	errDiskFull = models.Errorf(models.EUNAVAILABLE, "the database's disk is full; the write was not stored")
	errDiskIO   = models.Errorf(models.EUNAVAILABLE, "the database could not read or write its disk; the operation was not done")
)

// resultCode returns the (extended) SQLite result code carried by err.
func resultCode(err error) (int, bool) {
	var c interface{ Code() int } // *sqlite.Error; an interface so tests can fake any code
	if errors.As(err, &c) {
		return c.Code(), true
	}
	return 0, false
}

// isConstraintUnique reports whether err is a primary-key or unique violation.
func isConstraintUnique(err error) bool {
	code, ok := resultCode(err)
	return ok && (code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || code == sqlite3.SQLITE_CONSTRAINT_UNIQUE)
}

func notFound(format string, args ...any) error {
	return models.Errorf(models.ENOTFOUND, format, args...)
}

func unavailable() error {
	return models.Errorf(models.EUNAVAILABLE, "the search indexes are still loading")
}
