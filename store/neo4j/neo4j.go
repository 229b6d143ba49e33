// Package neo4j is Salience's Neo4j 5 store (docs/design.md#neo4j-store): the whole models.Store contract
// on neo4j-go-driver/v5, for deployments whose memory graph lives on Neo4j (single instance,
// cluster or Aura) and whose Salience servers are stateless replicas behind a load balancer.
//
// The graph, as Neo4j holds it:
//   - (:Node {ns, id}) is every graph node; a memory or chunk is also :Memory, an indexed unit
//     (a chunk, or a memory that was not chunked) also :Unit, a concept also :Concept. An edge
//     may name a node nothing else created yet (a concept before its first write): it becomes
//     a bare :Node until then.
//   - Edges are typed relationships (the edge type upper-cased, e.g. :MENTIONS) carrying the
//     type as written, the weight, the co-occurrence count and times, predicate and fact.
//   - Operational records are nodes: :Surfacing, :Event, :Conversation, :QueueItem, :Lease,
//     :JobRun, :State, and :Space (per namespace: the embedding dimension and memory count).
//
// Search runs on Neo4j's own indexes, never on copies in this process: a full-text index
// over the terms package nlp produces, each behind its namespace's token, proposes units that
// the embedded store's BM25 then scores over the namespace's statistics kept in the graph
// (bm25.go), and a vector index (cosine) finds nearest neighbours. Nothing is cached here,
// so every replica sees every write at once.
//
// Every operation that must be atomic is one transaction: a managed one (ExecuteWrite),
// retried by the driver on transient failures (deadlocks, leader changes), or one statement
// in an auto-commit transaction (writeOne), retried here; either way the work, Update's fn
// included, must be safe to run again. A read runs each of its queries as an auto-commit
// transaction, one round trip each, and retries itself. The namespace and every value
// travel as query parameters; the Cypher text is constant (TestCypherIsConstant checks it).
package neo4j

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"

	"github.com/salience-ai/salience/models"
)

// Options configure a Store.
type Options struct {
	// URI of the server: neo4j:// (routing: clusters and Aura, usually neo4j+s://) or bolt://
	// (one server). Required.
	URI string
	// User and Password for basic authentication; no user means no authentication.
	User, Password string
	// Database is the database name; empty uses the user's home database.
	Database string
	// Logger receives schema messages. Default slog.Default().
	Logger *slog.Logger
	// MaxConnections bounds the driver's connection pool. Default 100 (the driver's).
	MaxConnections int
	// FollowerReads lets a cluster serve reads from followers. Off, every transaction goes to
	// the leader, so a write through any server is read by every other at once (a server
	// reads its own writes either way); on, reads scale out but may trail another server's
	// writes by the replication lag. No difference on a single instance.
	FollowerReads bool
}

// Store is the Neo4j store. It implements models.Store and holds no state besides the
// driver: any number of processes may share one database.
type Store struct {
	driver neo4j.DriverWithContext
	db     string
	log    *slog.Logger
	// bookmarks chains every session of this process, so a read sees the writes this
	// process made before it even when a cluster routes it to another member.
	bookmarks     neo4j.BookmarkManager
	followerReads bool
	trips         atomic.Int64 // round trips made (RoundTrips)
	// nsVectors: the server filters its vector index by namespace inside the search
	// (Neo4j 2026.02 and later; schema.go), so a search reads only its namespace's vectors.
	nsVectors bool
}

var _ models.Store = (*Store)(nil)

// Open connects to Neo4j, checks that it answers, and creates the schema (constraints and
// indexes) when missing. It waits for the indexes to come online.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.URI == "" {
		return nil, models.Invalid("neo4j_uri", "the Neo4j URI is required (e.g. neo4j://host:7687)")
	}
	scheme, _, ok := strings.Cut(opts.URI, "://")
	switch {
	case !ok:
		return nil, models.Invalid("neo4j_uri", "the Neo4j URI needs a scheme: neo4j://, neo4j+s://, bolt:// or bolt+s://")
	case !strings.HasPrefix(scheme, "neo4j") && !strings.HasPrefix(scheme, "bolt"):
		return nil, models.Invalid("neo4j_uri", "unsupported scheme %q: use neo4j://, neo4j+s://, bolt:// or bolt+s://", scheme)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	auth := neo4j.NoAuth()
	if opts.User != "" {
		auth = neo4j.BasicAuth(opts.User, opts.Password, "")
	}
	driver, err := neo4j.NewDriverWithContext(opts.URI, auth, func(c *config.Config) {
		if opts.MaxConnections > 0 {
			c.MaxConnectionPoolSize = opts.MaxConnections
		}
		c.MaxTransactionRetryTime = retryTime
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: %w", translate(err, "connect"))
	}
	s := &Store{driver: driver, db: opts.Database, log: opts.Logger, followerReads: opts.FollowerReads,
		bookmarks: neo4j.NewBookmarkManager(neo4j.BookmarkManagerConfig{})}
	if err := driver.VerifyConnectivity(ctx); err != nil {
		driver.Close(ctx)
		return nil, translate(err, "connect")
	}
	if err := s.ensureSchema(ctx); err != nil {
		driver.Close(ctx)
		return nil, err
	}
	return s, nil
}

// Close closes the driver and its connections.
func (s *Store) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.driver.Close(ctx)
}

// Ping checks that the database answers a query, for readiness probes.
func (s *Store) Ping(ctx context.Context) error {
	return s.read(ctx, "ping", func(tx runner) error {
		_, err := collect(ctx, tx, `RETURN 1`, nil)
		return err
	})
}

func (s *Store) session(ctx context.Context, mode neo4j.AccessMode) neo4j.SessionWithContext {
	return s.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: mode, DatabaseName: s.db, BookmarkManager: s.bookmarks,
		BoltLogger: &tripLog{total: &s.trips}})
}

// write runs fn in one managed write transaction, retried by the driver on transient
// errors; fn must be safe to run again. Errors come back translated (translate).
func (s *Store) write(ctx context.Context, what string, fn func(tx neo4j.ManagedTransaction) error) error {
	sess := s.session(ctx, neo4j.AccessModeWrite)
	defer sess.Close(ctx)
	_, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) { return nil, fn(tx) })
	return translate(err, what)
}

// runner runs one query: a managed transaction (write), or a session whose every query is a
// transaction of its own (read).
type runner interface {
	Run(ctx context.Context, cypher string, params map[string]any) (neo4j.ResultWithContext, error)
}

// autoCommit runs each query as an auto-commit transaction of its session: one round trip
// (RUN and PULL pipelined, the server commits as it answers), where a managed transaction
// takes three (BEGIN, then RUN and PULL, then COMMIT).
type autoCommit struct{ sess neo4j.SessionWithContext }

func (a autoCommit) Run(ctx context.Context, cypher string, params map[string]any) (neo4j.ResultWithContext, error) {
	return a.sess.Run(ctx, cypher, params)
}

// retryTime bounds the retries of a transaction that failed transiently (a leader change, a
// dropped connection): the driver's for managed transactions (Open), read's for its own.
const retryTime = 30 * time.Second

// read runs fn, which only reads, each of its queries in a transaction of its own, on the
// leader, or on a follower with Options.FollowerReads. Neo4j reads at read-committed
// isolation, so queries sharing a transaction saw each other's commits no less; they only
// paid two more round trips for it.
func (s *Store) read(ctx context.Context, what string, fn func(tx runner) error) error {
	mode := neo4j.AccessModeWrite
	if s.followerReads {
		mode = neo4j.AccessModeRead
	}
	return s.auto(ctx, what, mode, fn)
}

// writeOne runs one write statement as an auto-commit transaction: atomic as any
// transaction, and one round trip where a managed one takes three. It returns once the
// commit is durable, as a managed transaction's does.
func (s *Store) writeOne(ctx context.Context, what, query string, params map[string]any) error {
	return s.auto(ctx, what, neo4j.AccessModeWrite, func(tx runner) error {
		return exec(ctx, tx, query, params)
	})
}

// auto runs fn with each query an auto-commit transaction, and again after a transient
// error (a deadlock, a leader change, a dropped connection) after a growing pause, for up to
// retryTime, as the driver does with managed transactions: fn must be safe to run again.
func (s *Store) auto(ctx context.Context, what string, mode neo4j.AccessMode, fn func(tx runner) error) error {
	var err error
	deadline := time.Now().Add(retryTime)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		sess := s.session(ctx, mode)
		err = fn(autoCommit{sess})
		sess.Close(ctx)
		if err == nil || !neo4j.IsRetryable(err) || time.Now().Add(pause).After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return translate(err, what)
		case <-time.After(pause):
		}
	}
	return translate(err, what)
}

// collect runs one query in tx and returns all its records. query is always a constant;
// values go in params.
func collect(ctx context.Context, tx runner, query string, params map[string]any) ([]*neo4j.Record, error) {
	res, err := tx.Run(ctx, query, params)
	if err != nil {
		return nil, err
	}
	return res.Collect(ctx)
}

// execCount runs one query in tx for its effect and returns the changes it made (nodes,
// relationships and labels created or deleted), for the namespace's counters.
func execCount(ctx context.Context, tx runner, query string, params map[string]any) (neo4j.Counters, error) {
	res, err := tx.Run(ctx, query, params)
	if err != nil {
		return nil, err
	}
	sum, err := res.Consume(ctx)
	if err != nil {
		return nil, err
	}
	return sum.Counters(), nil
}

// exec runs one query in tx for its effect.
func exec(ctx context.Context, tx runner, query string, params map[string]any) error {
	res, err := tx.Run(ctx, query, params)
	if err != nil {
		return err
	}
	_, err = res.Consume(ctx)
	return err
}

// Error translation. Neo4j status codes (Neo.<classification>.<category>.<title>) decide;
// messages are never parsed.
var (
	// codeConflict: a uniqueness constraint refused a write (an id that exists, or a
	// concurrent create of the same id).
	codeConflict = map[string]bool{
		"Neo.ClientError.Schema.ConstraintValidationFailed": true,
		"Neo.ClientError.Schema.ConstraintViolation":        true,
	}
	// codeNotFound: the object the statement needed is gone.
	codeNotFound = map[string]bool{
		"Neo.ClientError.Statement.EntityNotFound": true,
	}
	// codeInvalid: Neo4j rejected a value we passed on (a vector of the wrong size for the
	// index, a number out of range).
	codeInvalid = map[string]bool{
		"Neo.ClientError.Statement.ArgumentError":       true,
		"Neo.ClientError.Statement.TypeError":           true,
		"Neo.ClientError.Procedure.ProcedureCallFailed": true,
	}
	// codeUnavailable: the database cannot serve now or refuses us; retrying later or
	// fixing the deployment helps, changing the request does not.
	codeUnavailable = map[string]bool{
		"Neo.ClientError.Database.DatabaseNotFound":                          true,
		"Neo.ClientError.Security.Unauthorized":                              true,
		"Neo.ClientError.Security.AuthenticationRateLimit":                   true,
		"Neo.ClientError.Security.Forbidden":                                 true,
		"Neo.ClientError.Transaction.TransactionTimedOut":                    true,
		"Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration": true,
		"Neo.ClientError.General.ForbiddenOnReadOnlyDatabase":                true,
		"Neo.ClientError.Cluster.NotALeader":                                 true,
	}
)

// translate turns a driver error into a models error, keeping the driver error in the chain
// (the driver's retry logic looks for it there, and logs show it). Errors that already carry
// a models code, and errors that are not the driver's (a function's own), pass through with
// context added.
func translate(err error, what string) error {
	if err == nil {
		return nil
	}
	var me *models.Error
	if errors.As(err, &me) {
		return err
	}
	code := classify(err)
	if code == "" {
		return fmt.Errorf("neo4j: %s: %w", what, err)
	}
	msg := map[string]string{
		models.ECONFLICT:    "the object exists",
		models.ENOTFOUND:    "the object was not found",
		models.EINVALID:     "Neo4j rejected a value",
		models.EUNAVAILABLE: "Neo4j is unavailable",
		models.EINTERNAL:    "Neo4j failed",
	}[code]
	return fmt.Errorf("neo4j: %s: %w: %w", what, models.Errorf(code, "%s: %s", what, msg), err)
}

// classify returns the models code of a driver error, or "" for an error that is not the
// driver's.
func classify(err error) string {
	var limit *neo4j.TransactionExecutionLimit
	if errors.As(err, &limit) {
		// Retries ran out: the last attempt's error says why, but whatever it was, it was
		// retryable, so the database is busy or unreachable.
		return models.EUNAVAILABLE
	}
	var ne *neo4j.Neo4jError
	if errors.As(err, &ne) {
		switch {
		case codeConflict[ne.Code]:
			return models.ECONFLICT
		case codeNotFound[ne.Code]:
			return models.ENOTFOUND
		case codeInvalid[ne.Code]:
			return models.EINVALID
		case codeUnavailable[ne.Code], strings.HasPrefix(ne.Code, "Neo.TransientError."), ne.IsRetriable():
			return models.EUNAVAILABLE
		}
		return models.EINTERNAL
	}
	var conn *neo4j.ConnectivityError
	if errors.As(err, &conn) || neo4j.IsRetryable(err) {
		return models.EUNAVAILABLE
	}
	var usage *neo4j.UsageError
	if errors.As(err, &usage) {
		return models.EINTERNAL
	}
	var auth *neo4j.InvalidAuthenticationError
	if errors.As(err, &auth) {
		return models.EUNAVAILABLE
	}
	return ""
}

func notFound(format string, args ...any) error {
	return models.Errorf(models.ENOTFOUND, format, args...)
}

func conflict(format string, args ...any) error {
	return models.Errorf(models.ECONFLICT, format, args...)
}
