package neo4j

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
)

func TestTranslate(t *testing.T) {
	ne := func(code string) error { return &neo4j.Neo4jError{Code: code, Msg: "server says"} }
	boom := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want string // models code; "" = passed through without one
	}{
		{"unique constraint", ne("Neo.ClientError.Schema.ConstraintValidationFailed"), models.ECONFLICT},
		{"entity gone", ne("Neo.ClientError.Statement.EntityNotFound"), models.ENOTFOUND},
		{"bad argument", ne("Neo.ClientError.Statement.ArgumentError"), models.EINVALID},
		{"type error", ne("Neo.ClientError.Statement.TypeError"), models.EINVALID},
		{"procedure refused a value", ne("Neo.ClientError.Procedure.ProcedureCallFailed"), models.EINVALID},
		{"deadlock", ne("Neo.TransientError.Transaction.DeadlockDetected"), models.EUNAVAILABLE},
		{"database unavailable", ne("Neo.TransientError.General.DatabaseUnavailable"), models.EUNAVAILABLE},
		{"no such database", ne("Neo.ClientError.Database.DatabaseNotFound"), models.EUNAVAILABLE},
		{"wrong password", ne("Neo.ClientError.Security.Unauthorized"), models.EUNAVAILABLE},
		{"not a leader", ne("Neo.ClientError.Cluster.NotALeader"), models.EUNAVAILABLE},
		{"timed out", ne("Neo.ClientError.Transaction.TransactionTimedOut"), models.EUNAVAILABLE},
		{"our syntax", ne("Neo.ClientError.Statement.SyntaxError"), models.EINTERNAL},
		{"database error", ne("Neo.DatabaseError.General.UnknownError"), models.EINTERNAL},
		{"connectivity", &neo4j.ConnectivityError{Inner: io.EOF}, models.EUNAVAILABLE},
		{"retries exhausted", &neo4j.TransactionExecutionLimit{Cause: "timeout", Errors: []error{ne("Neo.TransientError.Transaction.DeadlockDetected")}}, models.EUNAVAILABLE},
		{"usage", &neo4j.UsageError{Message: "session closed"}, models.EINTERNAL},
		{"wrapped", wrapf(ne("Neo.ClientError.Schema.ConstraintValidationFailed")), models.ECONFLICT},
		{"models error", models.Errorf(models.ENOTFOUND, "memory m1 not found"), models.ENOTFOUND},
		{"a function's own error", boom, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := translate(tt.err, "do it")
			if tt.want == "" {
				if !errors.Is(got, boom) || models.ErrorCode(got) != models.EINTERNAL {
					t.Fatalf("translate(%v) = %v, want it passed through", tt.err, got)
				}
				return
			}
			if code := models.ErrorCode(got); code != tt.want {
				t.Fatalf("translate(%v) code = %q (%v), want %q", tt.err, code, got, tt.want)
			}
			// The driver's error stays in the chain: its retry logic and the logs need it.
			if !errors.Is(got, tt.err) {
				t.Fatalf("translate(%v) = %v lost the original error", tt.err, got)
			}
			// The message a caller may see names the operation, never the server's text.
			if msg := models.ErrorMessage(got); strings.Contains(msg, "server says") {
				t.Fatalf("user-facing message leaks the server's: %q", msg)
			}
		})
	}
	if translate(nil, "x") != nil {
		t.Fatal("translate(nil) != nil")
	}
}

// A transient error stays retryable after translation, so a managed transaction whose work
// function returns it (Update's fn returns Tx errors as they come) is retried by the driver.
func TestTranslateKeepsRetryable(t *testing.T) {
	err := translate(&neo4j.Neo4jError{Code: "Neo.TransientError.Transaction.DeadlockDetected"}, "put edge")
	if !neo4j.IsRetryable(err) {
		t.Fatalf("translated deadlock %v is not retryable", err)
	}
	if neo4j.IsRetryable(translate(&neo4j.Neo4jError{Code: "Neo.ClientError.Schema.ConstraintValidationFailed"}, "x")) {
		t.Fatal("a constraint violation became retryable")
	}
}

func wrapf(err error) error { return errors.Join(errors.New("context"), err) }

func TestOpenRejectsBadURIs(t *testing.T) {
	for _, uri := range []string{"", "localhost:7687", "http://localhost:7474"} {
		_, err := Open(context.Background(), Options{URI: uri})
		if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != "neo4j_uri" {
			t.Fatalf("Open(%q) = %v, want EINVALID naming neo4j_uri", uri, err)
		}
	}
	// A well-formed URI with nothing listening is EUNAVAILABLE, quickly.
	ctx, cancel := context.WithTimeout(context.Background(), 5e9)
	defer cancel()
	_, err := Open(ctx, Options{URI: "bolt://127.0.0.1:1"})
	if models.ErrorCode(err) != models.EUNAVAILABLE {
		t.Fatalf("Open(nothing listening) = %v, want EUNAVAILABLE", err)
	}
}

func TestLuceneQuery(t *testing.T) {
	tok := nsToken("ns") + "_"
	for _, tt := range []struct {
		terms []string
		want  string
	}{
		{[]string{"zither", "kayak"}, `"` + tok + `zither" "` + tok + `kayak"`},
		{[]string{"kayak", "zither", "kayak"}, `"` + tok + `kayak" "` + tok + `kayak" "` + tok + `zither"`}, // repeated terms count twice, as in the score
		{[]string{`a"b`, `c\d`}, `"` + tok + `a\"b" "` + tok + `c\\d"`},                                     // escaped, though nlp.Terms never makes these
		{[]string{"and", "xor"}, `"` + tok + `and" "` + tok + `xor"`},                                       // quoted: never operators
		// Common words carry their general prior (nlp.Prior) as a boost, rare ones none.
		{[]string{"place", "harmonica"}, `"` + tok + `place"^0.8482 "` + tok + `harmonica"`},
	} {
		if got := newTextQuery(tt.terms).lucene("ns"); got != tt.want {
			t.Fatalf("lucene(%q) = %s, want %s", tt.terms, got, tt.want)
		}
	}
}

// TestNamespaceTokens: each namespace's indexed terms carry its own token, hex of a fixed
// length, so Lucene reads one namespace's postings.
func TestNamespaceTokens(t *testing.T) {
	a, b := nsToken("alpha"), nsToken("beta")
	if a == b || len(a) != 16 || strings.Trim(a, "0123456789abcdef") != "" {
		t.Fatalf("nsToken: %q and %q", a, b)
	}
	if got, want := ixTerms("alpha", []string{"x", "y"}), a+"_x "+a+"_y"; got != want {
		t.Fatalf("ixTerms = %q, want %q", got, want)
	}
	if got := ixTerms("alpha", nil); got != "" {
		t.Fatalf("ixTerms(nothing) = %q", got)
	}
}

func TestCosine(t *testing.T) {
	// Neo4j reports cosine similarity as (1 + cos)/2.
	for _, tt := range []struct{ score, want float64 }{{1, 1}, {0.5, 0}, {0, -1}, {0.8, 0.6}} {
		if got := cosine(tt.score); got < tt.want-1e-12 || got > tt.want+1e-12 {
			t.Fatalf("cosine(%v) = %v, want %v", tt.score, got, tt.want)
		}
	}
}

func TestVectorHits(t *testing.T) {
	rows := []any{[]any{"b", 0.9}, []any{"a", 0.9}, []any{"c", 1.0}, []any{"d", 0.5}}
	got := vectorHits(rows, 3)
	want := []models.Hit{{ID: "c", Score: 1}, {ID: "a", Score: 0.8}, {ID: "b", Score: 0.8}}
	if len(got) != 3 {
		t.Fatalf("vectorHits = %v", got)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Score < want[i].Score-1e-9 || got[i].Score > want[i].Score+1e-9 {
			t.Fatalf("vectorHits = %v, want %v", got, want)
		}
	}
}
