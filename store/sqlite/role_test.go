package sqlite

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// A database written before memories had a role (migration 0014) opens, gains the column,
// and its memories read with no role: unknown, taken as the user's.
func TestRoleMigrationKeepsOldMemories(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	write := func(id string, role models.Role) {
		t.Helper()
		s, err := Open(path, Options{Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		m := &models.Memory{ID: id, Namespace: "n", Kind: models.KindTurn, Content: "the ferns need water on Fridays",
			CreatedAt: at, Confidence: 0.5, Source: models.Source{Speaker: "bot", Role: role}}
		if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: m}}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write("old", "")
	// The database as the release before roles left it.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`ALTER TABLE memories DROP COLUMN role`, `DELETE FROM migrations WHERE name = 'migrations/0014_source_role.sql'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	write("new", models.RoleAssistant)

	s, err := Open(path, Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]models.Role{"old": "", "new": models.RoleAssistant} {
		m, err := s.GetMemory(ctx, "n", id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Source.Role != want || m.Source.Speaker != "bot" {
			t.Errorf("%s: source = %+v, want role %q", id, m.Source, want)
		}
	}
}
