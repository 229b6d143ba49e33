package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	zs "zombiezen.com/go/sqlite"

	"github.com/salience-ai/salience/models"
)

// TestDiskFullIsUnavailable fills the database (max_page_count stands in for the disk: SQLite
// answers SQLITE_FULL the same way) and checks that the write is refused as unavailable with
// a message that names the cause and nothing internal, that nothing of it was stored, that
// reads go on, and that the same write succeeds once there is room.
func TestDiskFullIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	first := corpus(1, 64)
	if err := s.CreateMemories(ctx, first); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := s.wdb.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	// The writer is the store's only write connection, so the limit holds for every write.
	if _, err := s.wdb.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}
	batch := corpus(200, 64)[1:]
	err := s.CreateMemories(ctx, batch)
	if got := models.ErrorCode(err); got != models.EUNAVAILABLE {
		t.Fatalf("write to a full disk: code %q (%v), want %q", got, err, models.EUNAVAILABLE)
	}
	msg := models.ErrorMessage(err)
	if !strings.Contains(msg, "disk is full") || strings.Contains(msg, path) || strings.Contains(msg, "SQLITE") {
		t.Fatalf("message %q: want the cause, without paths or driver text", msg)
	}
	if code, ok := resultCode(err); !ok || code.ToPrimary() != zs.ResultFull {
		t.Fatalf("the driver's error is not kept for the log: %v", err)
	}

	// Reads go on, from SQL and from the indexes; nothing of the refused batch is there.
	if _, total, err := s.FindMemories(ctx, models.MemoryFilter{Namespace: "ns"}); err != nil || total != 1 {
		t.Fatalf("FindMemories on a full disk = %d, %v; want the 1 memory written before", total, err)
	}
	if _, err := s.GetMemory(ctx, "ns", first[0].Memory.ID); err != nil {
		t.Fatalf("GetMemory on a full disk: %v", err)
	}
	if ms, err := s.GetMemories(ctx, "ns", []string{batch[0].Memory.ID}); err != nil || len(ms) != 0 {
		t.Fatalf("a memory of the refused batch is readable: %d, %v", len(ms), err)
	}

	// Room again: the same write goes through.
	if _, err := s.wdb.ExecContext(ctx, `PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateMemories(ctx, batch); err != nil {
		t.Fatalf("write once there is room: %v", err)
	}
	if _, total, err := s.FindMemories(ctx, models.MemoryFilter{Namespace: "ns", Limit: 1}); err != nil || total != 200 {
		t.Fatalf("after the retry: %d memories, %v; want 200", total, err)
	}
}

// codeErr is a driver error with a given result code, for codes a test cannot provoke.
type codeErr int

func (c codeErr) Error() string { return fmt.Sprintf("driver error %d", int(c)) }
func (c codeErr) Code() int     { return int(c) }

func TestWrapTranslatesResultCodes(t *testing.T) {
	for _, tc := range []struct {
		code int
		want string
	}{
		{int(zs.ResultFull), models.EUNAVAILABLE},
		{int(zs.ResultIOErr), models.EUNAVAILABLE},
		{int(zs.ResultIOErrWrite), models.EUNAVAILABLE},
		{int(zs.ResultIOErrFsync), models.EUNAVAILABLE},
		{int(zs.ResultIOErrShortRead), models.EUNAVAILABLE},
		{int(zs.ResultBusy), models.EUNAVAILABLE},
		{int(zs.ResultBusySnapshot), models.EUNAVAILABLE},
		{int(zs.ResultLocked), models.EUNAVAILABLE},
		{int(zs.ResultConstraintPrimaryKey), models.ECONFLICT},
		{int(zs.ResultConstraintUnique), models.ECONFLICT},
		{int(zs.ResultConstraintNotNull), models.EINTERNAL},
		{int(zs.ResultCorrupt), models.EINTERNAL},
	} {
		err := wrap(fmt.Errorf("exec: %w", codeErr(tc.code)), "create memories")
		if got := models.ErrorCode(err); got != tc.want {
			t.Errorf("code %d: %q, want %q", tc.code, got, tc.want)
		}
		if tc.want == models.EUNAVAILABLE && !errors.Is(err, codeErr(tc.code)) {
			t.Errorf("code %d: the driver's error left the chain: %v", tc.code, err)
		}
	}
	if got := models.ErrorMessage(wrap(codeErr(zs.ResultIOErrWrite), "x")); !strings.Contains(got, "disk") {
		t.Errorf("I/O error message %q does not say it is the disk", got)
	}
}
