package sqlite

import (
	"context"
	"strings"

	"github.com/salience-ai/salience/models"
)

// nsTable is a table with a namespace column, and its primary key's columns.
type nsTable struct {
	name string
	pk   []string
}

// namespaceTables lists the tables with an ns column, read from the schema, so that a table
// a later migration adds is deleted with its namespace without a list to keep. Every one
// has ns as the first column of its primary key (TestDeleteNamespaceTables), so a batch is a
// range of that key. namespaces, which DeleteNamespace deletes last, comes last.
func (s *Store) namespaceTables(ctx context.Context) ([]nsTable, error) {
	var out []nsTable
	for r, err := range rowsOf(s.rdb.QueryContext(ctx, `SELECT m.name, p.name FROM sqlite_schema m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND p.pk > 0
		AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'ns')
		ORDER BY m.name = 'namespaces', m.name, p.pk`)) {
		var table, col string
		if err == nil {
			err = r.Scan(&table, &col)
		}
		if err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].name != table {
			out = append(out, nsTable{name: table})
		}
		t := &out[len(out)-1]
		t.pk = append(t.pk, col)
	}
	return out, nil
}

// DeleteNamespace deletes everything of ns: every row of every table with an ns column
// (namespaceTables), pruneBatch rows a transaction, and the state keys ns owns; then, in a
// last transaction, whatever rows of ns calls
// racing with it wrote meanwhile, and the namespace's row, while its in-memory indexes and
// cached conversations are dropped. Searches of ns meanwhile answer from the indexes as they
// were until that last transaction.
func (s *Store) DeleteNamespace(ctx context.Context, ns string) (models.NamespaceDeleted, error) {
	var d models.NamespaceDeleted
	if err := models.ValidateNamespace(ns); err != nil {
		return d, err
	}
	tables, err := s.namespaceTables(ctx)
	if err != nil {
		return d, wrap(err, "delete namespace: tables")
	}
	del := func(ctx context.Context, w *wtx, t nsTable, limit int) (int, error) {
		q := `DELETE FROM ` + t.name + ` WHERE ns = ?1`
		if limit > 0 {
			cols := strings.Join(t.pk, ", ")
			q += ` AND (` + cols + `) IN (SELECT ` + cols + ` FROM ` + t.name + ` WHERE ns = ?1 LIMIT ?2)`
		}
		n, err := w.ExecContext(ctx, q, ns, limit)
		if err != nil {
			return 0, err
		}
		if t.name == "memories" {
			d.Memories += int(n)
		}
		d.Records += int(n)
		return int(n), err
	}
	for _, t := range tables[:len(tables)-1] {
		for n := pruneBatch; n == pruneBatch; {
			err := s.write(ctx, "delete namespace "+t.name, func(w *wtx) (func(), error) {
				var err error
				n, err = del(ctx, w, t, pruneBatch)
				return nil, err
			})
			if err != nil {
				return d, err
			}
		}
	}
	err = s.write(ctx, "delete namespace", func(w *wtx) (func(), error) {
		// The counters take in every stored surfacing first (surfaced.go).
		if err := w.foldIfNeeded(ctx); err != nil {
			return nil, err
		}
		for _, t := range tables {
			if _, err := del(ctx, w, t, 0); err != nil {
				return nil, err
			}
		}
		for _, kind := range models.NamespaceStateKinds() {
			key, lo, hi := models.NamespaceKeys(kind, ns)
			n, err := w.ExecContext(ctx, `DELETE FROM state WHERE key = ?1 OR (key >= ?2 AND key < ?3)`, key, lo, hi)
			if err != nil {
				return nil, err
			}
			d.Records += int(n)
		}
		return func() {
			s.mem.Drop(ns)
			s.convs.Purge()
		}, nil
	})
	return d, err
}
