package sqlite

import (
	"fmt"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// TestTurnDiskFootprint records 2,000 ambient turns of ten results, as recall records them
// (every component set, concepts and terms, a conversation state carrying its last 20
// turns' ids), and measures with SQLite's dbstat the pages the turn history holds: the
// surfacings table and its indexes, and the conversations. It fails past 8 KiB a turn.
func TestTurnDiskFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("records 2,000 turns")
	}
	s := openReady(t)
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	const turns = 2000
	states := map[string]*models.ConversationState{}
	for n := range turns {
		at := base.Add(time.Duration(n) * time.Second)
		conv := fmt.Sprintf("conv-%d", n%100)
		ss := make([]*models.Surfacing, 10)
		shown := make([]string, len(ss))
		for j := range ss {
			c := models.Components{Features: 2}
			for k, f := range components(&c) {
				*f = 0.1 + float64(k)/31 + float64(j)/97
			}
			ss[j] = &models.Surfacing{ID: fmt.Sprintf("01S%018d%02d", n, j), Namespace: "ns", ConversationID: conv,
				TurnID: fmt.Sprintf("01T%018d", n), MemoryID: fmt.Sprintf("01J%023d", (n*7919+j*104729)%100_000),
				Mode: models.ModeAmbient, Rank: j + 1, Score: 0.5 + float64(j)/10, Components: c, ConvType: "casual",
				Threshold: 0.31, ArmProb: 0.25, Concepts: []string{"garden", "heron"}, Terms: []string{"heron", "pond", "morning"},
				PUse: 0.2, ModelVersion: int64(n), SettingsVersion: 3, LatencyMS: 2.5, At: at}
			shown[j] = ss[j].MemoryID
		}
		st := nextState(states, conv, shown, []string{"garden", "heron"}, at)
		if err := s.RecordSurfacings(ctx, ss, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.settle(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT name, sum(pgsize) FROM dbstat
		WHERE name IN (SELECT name FROM sqlite_schema WHERE tbl_name IN ('surfacings', 'conversations'))
		GROUP BY name ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	total := 0
	for rows.Next() {
		var name string
		var size int
		if err := rows.Scan(&name, &size); err != nil {
			t.Fatal(err)
		}
		t.Logf("%-34s %7.0f B a turn", name, float64(size)/turns)
		total += size
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%-34s %7.0f B a turn", "all", float64(total)/turns)
	if total == 0 || total/turns > 8<<10 {
		t.Errorf("a recorded turn takes %d B, want (0, 8 KiB]", total/turns)
	}
}

// nextState moves conversation conv's state (in states, created when missing) on by one
// turn that showed shown, keeping its last 20 turns' ids as recall does.
func nextState(states map[string]*models.ConversationState, conv string, shown, topics []string, at time.Time) *models.ConversationState {
	st := states[conv]
	if st == nil {
		st = &models.ConversationState{Namespace: "ns", ConversationID: conv, Type: "casual"}
		states[conv] = st
	}
	st.Turns++
	st.RecentSurfaced = append(st.RecentSurfaced, shown)
	if len(st.RecentSurfaced) > 20 {
		st.RecentSurfaced = st.RecentSurfaced[1:]
	}
	st.RecentTopics, st.UpdatedAt = topics, at
	return st
}
