package sqlite

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/salience-ai/salience/models"
)

func getState(t *testing.T, s *Store, key string) string {
	t.Helper()
	v, err := s.GetState(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// GetState reads this process's writes at once, a rolled-back one never, and another
// process's as soon as it commits.
func TestState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	if v := getState(t, s, "k"); v != "" {
		t.Fatalf("missing key reads %q", v)
	}
	if err := s.SetState(ctx, "k", "v1"); err != nil {
		t.Fatal(err)
	}
	if v := getState(t, s, "k"); v != "v1" {
		t.Fatalf("after SetState: %q, want v1", v)
	}
	if err := s.Update(ctx, func(tx models.Tx) error { return tx.SetState("k", "v2") }); err != nil {
		t.Fatal(err)
	}
	if v := getState(t, s, "k"); v != "v2" {
		t.Fatalf("after an Update: %q, want v2", v)
	}
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx models.Tx) error {
		if err := tx.SetState("k", "rolled back"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if v := getState(t, s, "k"); v != "v2" {
		t.Fatalf("after a rolled-back Update: %q, want v2", v)
	}

	// Another process writes the database.
	if v := getState(t, s, "other"); v != "" {
		t.Fatal(v)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, kv := range [][2]string{{"other", "theirs"}, {"k", "theirs too"}} {
		if _, err := db.ExecContext(ctx, upsertState, kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if v := getState(t, s, "other"); v != "theirs" {
		t.Fatalf("another process's write: %q, want theirs", v)
	}
	if v := getState(t, s, "k"); v != "theirs too" {
		t.Fatalf("another process's write: %q, want theirs too", v)
	}
}
