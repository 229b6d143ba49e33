package sqlite

import (
	"testing"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/storetest"
)

// TestDeleteNamespaceSmallBatches runs the suite's DeleteNamespace test with batches of two
// rows, so that every table takes several transactions, and then counts, table by table
// of the schema, the rows left of the deleted namespace ("suite"): none may be.
func TestDeleteNamespaceSmallBatches(t *testing.T) {
	defer func(n int) { pruneBatch = n }(pruneBatch)
	pruneBatch = 2
	var s *Store
	storetest.DeleteNamespace(t, func(t *testing.T) models.Store { s = openReady(t); return s })
	tables, err := s.namespaceTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 14 || tables[len(tables)-1].name != "namespaces" {
		t.Fatalf("tables with a namespace: %v; want the schema's 14 or more, namespaces last", tables)
	}
	for _, tb := range tables {
		if tb.pk[0] != "ns" {
			t.Errorf("table %s: primary key %v does not start with ns, so a batch is no range of it", tb.name, tb.pk)
		}
		var n int
		if err := s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM `+tb.name+` WHERE ns = 'suite'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		// The suite made the namespace anew with one memory.
		want := map[string]int{"memories": 1, "namespaces": 1}[tb.name]
		if n != want {
			t.Errorf("table %s: %d rows of the namespace, want %d", tb.name, n, want)
		}
	}
}
