package sqlite

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// The benchmarks of this file run the row codecs (bind and scan) on small databases, so
// that a change to how columns are bound can be measured in seconds; the 100k benchmarks in
// bench_test.go measure the same paths at scale.

// BenchmarkRebuild10k measures loading 10,000 memories: every memory row is scanned once.
func BenchmarkRebuild10k(b *testing.B) {
	s := openAt(b, buildDB(b, 10_000, 384))
	cpu0 := cpuTime()
	for b.Loop() {
		if err := s.Rebuild(ctx); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}

// BenchmarkSQLMemories10k measures hydrating 100 memories from SQLite (the read path before
// the indexes are loaded, and the Tx's fallback).
func BenchmarkSQLMemories10k(b *testing.B) {
	s := openAt(b, buildDB(b, 10_000, 384))
	r := rand.New(rand.NewPCG(5, 6))
	ids := make([][]string, 100)
	for i := range ids {
		for range 100 {
			ids[i] = append(ids[i], fmt.Sprintf("01J%023d", r.IntN(10_000)))
		}
	}
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		if ms, err := s.sqlMemories(ctx, "ns", ids[i%len(ids)]); err != nil || len(ms) != 100 {
			b.Fatal(len(ms), err)
		}
		i++
	}
	reportCPU(b, cpu0)
}

// benchSurfacings returns the surfacings of turn t: ten memories of a small namespace.
func benchSurfacings(t int, at time.Time) []*models.Surfacing {
	out := make([]*models.Surfacing, 10)
	for j := range out {
		out[j] = &models.Surfacing{
			ID: fmt.Sprintf("01S%018d-%02d", t, j), Namespace: "ns", ConversationID: fmt.Sprintf("conv-%d", t%50),
			TurnID: fmt.Sprintf("turn-%d", t), MemoryID: fmt.Sprintf("01J%023d", (t*10+j)%1000), Mode: models.ModeAmbient,
			Rank: j + 1, Score: 0.5, Components: models.Components{Relevance: 0.4, BM25: 0.2, Confidence: 0.5}, ConvType: "casual",
			Threshold: 0.3, Concepts: []string{"cat", "garden"}, LatencyMS: 2.5, At: at,
		}
	}
	return out
}

// BenchmarkRecordSurfacings measures recording one recall turn: ten surfacings and the
// conversation state.
func BenchmarkRecordSurfacings(b *testing.B) {
	s := openAt(b, buildDB(b, 1000, 8))
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	t := 0
	cpu0 := cpuTime()
	for b.Loop() {
		at := base.Add(time.Duration(t) * time.Second)
		state := &models.ConversationState{Namespace: "ns", ConversationID: fmt.Sprintf("conv-%d", t%50), Turns: t,
			RecentTopics: []string{"cat"}, UpdatedAt: at}
		if err := s.RecordSurfacings(ctx, benchSurfacings(t, at), state); err != nil {
			b.Fatal(err)
		}
		t++
	}
	reportCPU(b, cpu0)
}

// BenchmarkEngagementTx measures the engagement write of one explicit report: read the
// surfacing and its memory, record the outcome, the memory's metadata and the event, in one
// Update.
func BenchmarkEngagementTx(b *testing.B) {
	s := openAt(b, buildDB(b, 1000, 8))
	if err := s.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	const turns = 2000
	for t := range turns {
		if err := s.RecordSurfacings(ctx, benchSurfacings(t, base.Add(time.Duration(t)*time.Second)), nil); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		sid := fmt.Sprintf("01S%018d-%02d", i/10%turns, i%10)
		err := s.Update(ctx, func(tx models.Tx) error {
			sf, err := tx.GetSurfacing("ns", sid)
			if err != nil {
				return err
			}
			m, err := tx.GetMemory("ns", sf.MemoryID)
			if err != nil {
				return err
			}
			at := sf.At.Add(time.Minute)
			sf.Outcome, sf.OutcomeAt = models.EventUsed, at
			if err := tx.PutSurfacing(sf); err != nil {
				return err
			}
			m.UsageCount++
			m.LastUsed = at
			if err := tx.PutMemory(m); err != nil {
				return err
			}
			return tx.InsertEvent(&models.Event{Namespace: "ns", ID: fmt.Sprintf("01E%023d", i), SurfacingID: sid,
				MemoryID: sf.MemoryID, ConversationID: sf.ConversationID, Type: models.EventUsed, At: at})
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
	reportCPU(b, cpu0)
}

// BenchmarkFindSurfacings measures scanning 100 surfacing rows.
func BenchmarkFindSurfacings(b *testing.B) {
	s := openAt(b, buildDB(b, 1000, 8))
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for t := range 1000 {
		if err := s.RecordSurfacings(ctx, benchSurfacings(t, base.Add(time.Duration(t)*time.Second)), nil); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		got, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: "ns", ConversationID: fmt.Sprintf("conv-%d", i%50), Limit: 100})
		if err != nil || len(got) != 100 {
			b.Fatal(len(got), err)
		}
		i++
	}
	reportCPU(b, cpu0)
}

// reportCPU reports the process's CPU time per operation since cpu0: on a shared machine it
// varies far less than wall time. It includes the store's background checkpoints.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkRecordTurns100k measures storing a recall turn — ten surfacings of random
// memories among 100,000, in one of 100 conversations whose state carries its last 20
// turns' ids, as recall's does, each in its own RecordSurfacings, with the folds of the
// counters (surfaced.go) that the turns make due included. cpu-ns/op is per turn.
func BenchmarkRecordTurns100k(b *testing.B) {
	s := openAt(b, buildDB(b, 100_000, 256))
	if err := s.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	var ids []string
	rows, err := s.rdb.QueryContext(ctx, `SELECT id FROM memories WHERE ns = 'ns' AND parent_id = ''`)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Close(); err != nil || len(ids) < 100_000 {
		b.Fatal(len(ids), err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	states := map[string]*models.ConversationState{}
	t := 0
	{
		b.Run("sync", func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				at := base.Add(time.Duration(t) * time.Second)
				ss := benchSurfacings(t, at)
				conv := fmt.Sprintf("conv-%d", t%100)
				shown := make([]string, len(ss))
				for i, sf := range ss {
					sf.MemoryID = ids[r.IntN(len(ids))]
					sf.ConversationID = conv
					sf.Terms = []string{"cat", "garden", "morning"}
					shown[i] = sf.MemoryID
				}
				st := nextState(states, conv, shown, []string{"cat", "garden"}, at)
				if err := s.RecordSurfacings(ctx, ss, st); err != nil {
					b.Fatal(err)
				}
				t++
			}
			if err := s.settle(ctx); err != nil {
				b.Fatal(err)
			}
			reportCPU(b, cpu0)
		})
	}
}

// BenchmarkGetConversation reads a full-length conversation state (20 turns of ten surfaced
// ids, 30 message times), as recall does every turn: from the cache RecordSurfacings filled,
// and from its row.
func BenchmarkGetConversation(b *testing.B) {
	s := openAt(b, filepath.Join(b.TempDir(), "salience.db"))
	if err := s.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	st := &models.ConversationState{Namespace: "ns", ConversationID: "c1", Type: "casual", Turns: 40,
		RecentTopics: []string{"garden", "heron", "pond"}, Participants: []string{"ana", "bot"}, UpdatedAt: at}
	for i := range 30 {
		st.MessageTimes = append(st.MessageTimes, at.Add(time.Duration(i)*time.Minute))
	}
	for i := range 20 {
		var ids []string
		for j := range 10 {
			ids = append(ids, fmt.Sprintf("01KJMMA2G075Y9BD7G69CD%04d", i*10+j))
		}
		st.RecentSurfaced = append(st.RecentSurfaced, ids)
	}
	st.RecentTurns = [][]string{{"garden", "heron"}, {"pond"}, {"heron"}}
	if err := s.RecordSurfacings(ctx, nil, st); err != nil {
		b.Fatal(err)
	}
	read := func(b *testing.B) {
		for b.Loop() {
			if c, err := s.GetConversation(ctx, "ns", "c1"); err != nil || len(c.RecentSurfaced) != 20 {
				b.Fatal(c, err)
			}
		}
	}
	b.Run("cached", read)
	s.convs.Purge()
	b.Run("row", read)
}
