// Package sqlite is Salience's embedded default store: one SQLite file in WAL mode is the
// system of record, and search runs on in-memory indexes and caches (package memindex) that
// Rebuild loads from it (load.go) and every write updates after it commits. Writers are
// serialized: one write connection and a mutex that also orders the in-memory updates like
// the commits. Readers use a pool of their own connections (conn.go).
package sqlite

import (
	"context"
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

	lru "github.com/hashicorp/golang-lru/v2"
	zs "zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/memindex"
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
	wdb  *conn // exactly one connection: the writer (write.go)
	rdb  pool  // the read pool
	now  func() time.Time
	log  *slog.Logger

	// wmu serializes write transactions and the in-memory updates that follow their
	// commits, so the indexes see changes in commit order; Rebuild holds it too.
	wmu sync.Mutex

	lazy lazyState // namespaces loaded on demand under a budget (lazy.go), when budget > 0

	mem   *memindex.Set // the in-memory indexes and caches, valid when ready
	ready atomic.Bool

	cdb             *conn // the connection of background checkpoints
	stopCheckpoints context.CancelFunc
	checkpoints     sync.WaitGroup
	ckpt            checkpointStats
	postponedInRow  int          // rewinds readers postponed since the last one done; checkpointer only
	commits         atomic.Int64 // write transactions committed: the checkpointer's idle test
	pageSize        int
	closed          bool // guarded by wmu
	// unfolded counts the surfacings this process stored since it last folded them into
	// the counters (surfaced.go); it starts at 1, for what an earlier process left.
	unfolded   atomic.Int64
	folding    atomic.Bool  // a background fold runs (surfaced.go)
	readWarned atomic.Int64 // when settleRead last logged a failure (unix nanoseconds)

	convs *lru.Cache[[2]string, *models.ConversationState] // see convCacheSize
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
	s := &Store{path: path, now: opts.Now, log: opts.Logger, mem: memindex.NewSet(opts.IndexBudget, opts.Logger)}
	s.unfolded.Store(1)
	s.convs, _ = lru.New[[2]string, *models.ConversationState](convCacheSize) // fails only for a size ≤ 0
	// The writer opens first and applies the migrations: the file is created and switched
	// to WAL before any other connection opens it.
	w, err := openWriter(path)
	if err != nil {
		return nil, err
	}
	s.wdb = w
	if err := s.migrate(context.Background()); err != nil {
		w.Close()
		return nil, err
	}
	// Checkpoints run in the background (checkpoint.go).
	if s.cdb, err = openConn(path, zs.OpenReadWrite, `synchronous = NORMAL`); err != nil {
		w.Close()
		return nil, err
	}
	s.rdb = make(pool, opts.ReadConns)
	for range opts.ReadConns {
		c, err := openReader(path)
		if err != nil {
			for len(s.rdb) < cap(s.rdb) {
				s.rdb <- nil
			}
			s.closeConns()
			return nil, err
		}
		s.rdb <- c
	}
	if err := s.wdb.QueryRowContext(context.Background(), `PRAGMA page_size`).Scan(&s.pageSize); err != nil {
		s.closeConns()
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
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
	// A reader's load in flight ends first (it takes wmu itself), and none starts after.
	s.lazy.loadMu.Lock()
	s.lazy.closing = true
	if s.lazy.free != nil {
		s.lazy.free.Close()
		s.lazy.free = nil
	}
	s.lazy.loadMu.Unlock()
	// The checkpointer stops first: it takes wmu itself to reset the WAL.
	s.stopCheckpoints()
	s.checkpoints.Wait()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil
	}
	// The counters take in the last surfacings (surfaced.go), so the next open reads them
	// from one table; a failure leaves them to the next open's fold.
	ferr := s.foldLocked(context.Background())
	s.closed = true
	s.ready.Store(false)
	s.closeLazyRaw()
	// A last full checkpoint leaves the data in the file and the WAL empty.
	_, _, cerr := s.checkpointWaiting(context.Background(), "TRUNCATE", busyTimeout)
	return errors.Join(ferr, cerr, s.closeConns())
}

// closeConns closes every connection Open opened.
func (s *Store) closeConns() error {
	var errs []error
	for _, c := range []*conn{s.cdb, s.wdb} {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	for range cap(s.rdb) { // waits for the reads in flight
		if c := <-s.rdb; c != nil {
			errs = append(errs, c.Close())
		}
	}
	close(s.rdb) // a read after Close fails at once
	return errors.Join(errs...)
}

// openWriter opens the write connection. It keeps 8 MiB of pages (SQLite's default is 2). A
// larger cache costs every commit that split a B-tree page: the split renumbers pages
// through the pending-byte page's number, and the commit then walks the whole cache to drop
// pages past the database's end (pcache1Truncate). At 16 MiB that walk was about a tenth of
// a recorded turn's CPU; 8 MiB against 16, alternating at 100,000 memories: recall CPU about
// 0.25 ms a call less, p95 median 3.18 against 3.44 ms, engagement 6,044 against 5,720
// events/s (medians of five). 2 and 4 MiB did no better. wal_autocheckpoint and
// journal_size_limit: see checkpoint.go.
func openWriter(path string) (*conn, error) {
	return openConn(path, zs.OpenReadWrite|zs.OpenCreate|zs.OpenWAL, `synchronous = NORMAL`, `foreign_keys = 1`,
		`temp_store = MEMORY`, `wal_autocheckpoint = 0`, fmt.Sprintf(`journal_size_limit = %d`, maxWAL), `cache_size = -8192`)
}

// openReader opens a read-only connection, for the read pool and the index loads.
func openReader(path string) (*conn, error) {
	return openConn(path, zs.OpenReadOnly, `temp_store = MEMORY`)
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
		var n int
		err := s.wdb.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations WHERE name = ?`, name).Scan(&n)
		if err == nil && n == 0 {
			err = s.write(ctx, "migrate", func(tx *wtx) (func(), error) {
				body, err := fs.ReadFile(migrationFS, name)
				if err == nil {
					err = sqlitex.ExecuteScript(tx.c, string(body), nil)
				}
				if err == nil {
					_, err = tx.ExecContext(ctx, `INSERT INTO migrations (name, applied_at) VALUES (?, ?)`, name, s.now().UnixNano())
				}
				return nil, err
			})
			if err == nil {
				s.log.Info("sqlite: applied migration", "name", name, "path", s.path)
			}
		}
		if err != nil {
			return fmt.Errorf("sqlite: migration %s: %w", name, err)
		}
	}
	return nil
}

// Migrations returns the names of the applied migrations, in order.
func (s *Store) Migrations(ctx context.Context) ([]string, error) {
	return queryAll(ctx, s.rdb, "list migrations", `SELECT name FROM migrations ORDER BY name`, nil,
		func(r scanner) (name string, err error) { return name, r.Scan(&name) })
}

// wrap translates an SQLite error into a models error by result code (never by message
// text) and adds context; errors that carry a models code pass through. The SQLite error
// stays in the chain for the log; clients see only the models message.
func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	var me *models.Error
	if errors.As(err, &me) {
		return err
	}
	if code, ok := resultCode(err); ok {
		switch code.ToPrimary() {
		case zs.ResultConstraint:
			if code == zs.ResultConstraintPrimaryKey || code == zs.ResultConstraintUnique {
				return &models.Error{Code: models.ECONFLICT, Message: what + ": the object exists"}
			}
		case zs.ResultBusy, zs.ResultLocked:
			return fmt.Errorf("sqlite: %s: %w: %w", what, models.Errorf(models.EUNAVAILABLE, "the database is busy"), err)
		case zs.ResultFull:
			return fmt.Errorf("sqlite: %s: %w: %w", what, errDiskFull, err)
		case zs.ResultIOErr:
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
func resultCode(err error) (zs.ResultCode, bool) {
	var c interface{ Code() int } // tests fake any code with it
	if errors.As(err, &c) {
		return zs.ResultCode(c.Code()), true
	}
	if code := zs.ErrCode(err); code != zs.ResultError {
		return code, true
	}
	return 0, false
}

// isConstraintUnique reports whether err is a primary-key or unique violation.
func isConstraintUnique(err error) bool {
	code, ok := resultCode(err)
	return ok && (code == zs.ResultConstraintPrimaryKey || code == zs.ResultConstraintUnique)
}

func notFound(format string, args ...any) error {
	return models.Errorf(models.ENOTFOUND, format, args...)
}

func unavailable() error {
	return models.Errorf(models.EUNAVAILABLE, "the search indexes are still loading")
}
