package sqlite

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"sync"
	"testing"
)

// TestMain records the text of every statement the package's tests run, and fails the run
// on any that binds a list a placeholder an item (an IN list, or rows of VALUES): each
// length would be a statement of its own, kept prepared on every connection without bound
// (conn.go). Lists go in as one JSON argument (inList). Benchmarks run without the record.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() != "" {
		os.Exit(m.Run())
	}
	var mu sync.Mutex
	texts := map[string]bool{}
	hear := func(q string) {
		mu.Lock()
		texts[q] = true
		mu.Unlock()
	}
	prepared.Store(&hear)
	code := m.Run()
	prepared.Store(nil)
	if err := checkStatementTexts(texts); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		code = 1
	}
	os.Exit(code)
}

var perItem = regexp.MustCompile(`(?i)\bIN\s*\(\s*\?|\)\s*,\s*\(\s*\?`)

// checkStatementTexts returns an error naming the first text that binds a list a
// placeholder an item.
func checkStatementTexts(texts map[string]bool) error {
	for q := range texts {
		if perItem.MatchString(q) {
			return fmt.Errorf("a statement binds a list a placeholder an item (use inList): %s", q)
		}
	}
	return nil
}

// TestCheckStatementTexts: the check catches both forms, and passes inList and the
// generated statements.
func TestCheckStatementTexts(t *testing.T) {
	for q, bad := range map[string]bool{
		`SELECT id FROM t WHERE ns = ? AND id IN (?, ?, ?)`:          true,
		`DELETE FROM t WHERE id in ( ?)`:                             true,
		`INSERT INTO t (a, b) VALUES (?, ?), (?, ?)`:                 true,
		`SELECT id FROM t WHERE ns = ? AND id IN ` + inList:          false,
		insertSurfacing.sql:                                          false,
		upsertEdge.sql:                                               false,
		`SELECT count(*) FROM t WHERE ns = ?1 AND (a, b) > (?2, ?3)`: false,
	} {
		if err := checkStatementTexts(map[string]bool{q: true}); (err != nil) != bad {
			t.Errorf("%s: err = %v, want an error: %v", q, err, bad)
		}
	}
}
