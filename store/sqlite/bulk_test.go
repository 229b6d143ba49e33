package sqlite

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// PutEdges leaves the database, and the graph after the commit, as PutEdge one by one does:
// new edges inserted, existing ones replaced, the later of two edges with one key winning.
func TestPutEdgesEqualsPutEdge(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var ws []*models.MemoryWrite
	for i := range 4 {
		ws = append(ws, &models.MemoryWrite{Memory: &models.Memory{ID: fmt.Sprintf("m%d", i), Namespace: "ns",
			Kind: models.KindTurn, Content: fmt.Sprintf("memory number %d", i), CreatedAt: at, Confidence: 0.5}})
	}
	var edges []*models.Edge
	for i := range 150 { // more than one statement's worth, in sizes 128 + 16 + 4 + 2
		edges = append(edges, &models.Edge{Namespace: "ns", From: fmt.Sprintf("m%d", i%4), To: fmt.Sprintf("concept-%d", i%137),
			Type: models.EdgeMentions, Weight: float64(i%10) / 10, CoOccurrences: i, LastCoOccurred: at.Add(time.Duration(i) * time.Minute)})
	}
	results := map[string][]*models.Edge{}
	for _, mode := range []string{"one by one", "at once"} {
		s := openReady(t)
		if err := s.CreateMemories(ctx, ws); err != nil {
			t.Fatal(err)
		}
		err := s.Update(ctx, func(tx models.Tx) error {
			if mode == "at once" {
				return tx.(*storeTx).PutEdges(edges)
			}
			for _, e := range edges {
				if err := tx.PutEdge(e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		got, err := s.StrongestNeighbors(ctx, "ns", []string{"m0", "m1", "m2", "m3"}, 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		results[mode] = got
		rows, err := s.wdb.QueryContext(ctx, edgeRows.sel+` WHERE ns = 'ns' ORDER BY src, dst, type`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			e, err := scanEdge(rows)
			if err != nil {
				t.Fatal(err)
			}
			results[mode+" rows"] = append(results[mode+" rows"], e)
		}
		rows.Close()
		var n int
		if err := s.wdb.QueryRowContext(ctx, `SELECT COUNT(*) FROM edges WHERE ns = 'ns'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 150 {
			t.Errorf("%s: %d edge rows, want 150 (m%%4 × concept%%137 are all distinct keys)", mode, n)
		}
	}
	for _, what := range []string{"", " rows"} {
		a, b := results["one by one"+what], results["at once"+what]
		if len(a) != len(b) || len(a) < 150 {
			t.Fatalf("edges%s: %d one by one, %d at once, want ≥ 150", what, len(a), len(b))
		}
		for i := range a {
			if fmt.Sprint(*a[i]) != fmt.Sprint(*b[i]) {
				t.Errorf("edge%s %d: one by one %v, at once %v", what, i, *a[i], *b[i])
			}
		}
	}
	// An invalid edge writes nothing.
	s := openReady(t)
	bad := append(slices.Clone(edges[:3]), &models.Edge{Namespace: "ns", From: "", To: "x", Type: models.EdgeMentions})
	if err := s.Update(ctx, func(tx models.Tx) error { return tx.(*storeTx).PutEdges(bad) }); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("an invalid edge: %v, want EINVALID", err)
	}
}

// GetSurfacings returns what GetSurfacing returns for each id that exists in the namespace,
// and nothing for the others.
func TestGetSurfacingsEqualsGetSurfacing(t *testing.T) {
	s := openAt(t, buildDB(t, 50, 4))
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for turn := range 40 { // 400 surfacings: more than one statement's worth
		ss := benchSurfacings(turn, base.Add(time.Duration(turn)*time.Second))
		if err := s.RecordSurfacings(ctx, ss, nil); err != nil {
			t.Fatal(err)
		}
		for _, sf := range ss {
			ids = append(ids, sf.ID)
		}
	}
	ask := append(slices.Clone(ids[:300]), "01SMISSING", ids[310])
	err := s.Update(ctx, func(tx models.Tx) error {
		got, err := tx.(*storeTx).GetSurfacings("ns", ask)
		if err != nil {
			return err
		}
		if len(got) != 301 {
			t.Fatalf("got %d surfacings, want 301 (the missing id left out)", len(got))
		}
		for _, sf := range got {
			one, err := tx.GetSurfacing("ns", sf.ID)
			if err != nil {
				return err
			}
			if fmt.Sprint(*one) != fmt.Sprint(*sf) {
				t.Errorf("surfacing %s: GetSurfacings %v, GetSurfacing %v", sf.ID, *sf, *one)
			}
		}
		other, err := tx.(*storeTx).GetSurfacings("other", ask)
		if err != nil || len(other) != 0 {
			t.Errorf("another namespace: %d surfacings, %v; want none", len(other), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
