package neo4j

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/storetest"
)

// uriEnv names the Neo4j the integration tests run against; `make test-neo4j` starts a
// throw-away Neo4j 5 Community and sets it.
const uriEnv = "SALIENCE_NEO4J_URI"

// openTestStore connects to the test Neo4j, or skips with the one line that says how to
// run these tests. The database is wiped: the tests own it.
func openTestStore(t *testing.T) *Store {
	t.Helper()
	uri := os.Getenv(uriEnv)
	if uri == "" {
		t.Skip("Neo4j store tests skipped: " + uriEnv + " is not set; run `make test-neo4j` (starts Neo4j 5 through Maven, needs Java 17)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := Open(ctx, Options{URI: uri, User: os.Getenv("SALIENCE_NEO4J_USER"), Password: os.Getenv("SALIENCE_NEO4J_PASSWORD")})
	if err != nil {
		t.Fatalf("Open(%s): %v", uri, err)
	}
	t.Cleanup(func() { s.Close() })
	wipe(t, s)
	return s
}

const wipeAll = `MATCH (n) DETACH DELETE n`

func wipe(t *testing.T, s *Store) {
	t.Helper()
	err := s.write(context.Background(), "wipe", func(tx neo4j.ManagedTransaction) error {
		return exec(context.Background(), tx, wipeAll, nil)
	})
	if err != nil {
		t.Fatalf("wipe: %v", err)
	}
}

// TestNeo4j holds every test that needs a running Neo4j, so that without one a plain
// `go test` reports a single skip.
func TestNeo4j(t *testing.T) {
	s := openTestStore(t)
	t.Run("Conformance", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) models.Store {
			wipe(t, s)
			return s
		})
	})
}
