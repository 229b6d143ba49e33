package sqlite

import (
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// TestSurfacingLookupsUseTheirIndexes: every FindSurfacings shape a caller runs (engagement,
// the bandit, the metrics, prediction, the implicit-ignore job) searches an index, never
// scans the table — surfacings grow by ten rows a turn, so a scan would grow with them. It
// also pins which index serves each, so a schema change that drops one is caught here.
func TestSurfacingLookupsUseTheirIndexes(t *testing.T) {
	s := openReady(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		f     models.SurfacingFilter
		index string
	}{
		{"engagement: a memory's latest surfacing in a conversation",
			models.SurfacingFilter{Namespace: "a", ConversationID: "c", MemoryID: "m", Until: at, Desc: true, Limit: 1},
			"surfacings_conversation_memory"},
		{"engagement: a turn's surfacings",
			models.SurfacingFilter{Namespace: "a", ConversationID: "c", TurnID: "t", Brief: true, Limit: 100},
			"surfacings_turn"},
		{"bandit: a turn's outcomes",
			models.SurfacingFilter{Namespace: "a", TurnID: "t", Limit: 1000},
			"surfacings_turn"},
		{"metrics: a window",
			models.SurfacingFilter{Namespace: "a", Since: at, Until: at.Add(time.Hour), Brief: true},
			"surfacings_at"},
		{"prediction: the newest",
			models.SurfacingFilter{Namespace: "a", Since: at, Desc: true, Brief: true},
			"surfacings_at"},
		{"implicit ignore: pending, across namespaces",
			models.SurfacingFilter{NoOutcome: true, Since: at, Until: at.Add(time.Hour), Limit: 500},
			"surfacings_pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, args, _, err := surfacingQuery(tc.f)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := s.rdb.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, unused int
				var detail string
				if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			joined := strings.Join(plan, "; ")
			if !strings.Contains(joined, "SEARCH surfacings USING INDEX "+tc.index+" ") {
				t.Fatalf("plan %q, want a search of %s", joined, tc.index)
			}
			if strings.Contains(joined, "TEMP B-TREE") {
				t.Fatalf("plan %q sorts: the index should give the order", joined)
			}
		})
	}
}
