package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func surfacing(namespace, id, conv, memID string, minute int) *models.Surfacing {
	return &models.Surfacing{
		ID: id, Namespace: namespace, ConversationID: conv, TurnID: "turn-" + id, MemoryID: memID,
		Mode: models.ModeAmbient, Rank: 1, Score: 0.8, At: at(minute),
	}
}

func testSurfacings(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	full := surfacing(ns, "s-full", "c1", "m1", 5)
	full.Components = models.Components{Relevance: 0.9, BM25: 0.4, Vector: 0.5, Confidence: 0.6, Freshness: 0.7, Importance: 0.5, Novelty: 1}
	full.ConvType, full.Threshold, full.ArmProb, full.Variant = models.ConvDebugging, 0.6, 0.25, "treatment"
	full.Concepts = []string{"berlin", "moving"}
	full.LatencyMS = 3.25
	full.SettingsVersion = 7
	state := &models.ConversationState{
		Namespace: ns, ConversationID: "c1", Type: models.ConvDebugging, Turns: 3,
		RecentTopics: []string{"berlin"}, MessageTimes: []time.Time{at(1), at(2).Add(5 * time.Millisecond)},
		Participants: []string{"ann", "bot"}, UpdatedAt: at(5),
		RecentSurfaced: [][]string{{"m3", "m2"}, {"m1"}},
		RecentTurns:    [][]string{{"berlin", "moving"}, {}, {"flats"}},
	}
	// Out of time order on purpose.
	mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{
		surfacing(ns, "s3", "c1", "m3", 30), full, surfacing(ns, "s2", "c2", "m1", 20), surfacing(ns, "s1", "c1", "m2", 10),
	}, state))
	mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{surfacing(other, "s9", "c1", "m1", 15)}, nil))

	t.Run("GetSurfacing", func(t *testing.T) {
		got, err := s.GetSurfacing(ctx, ns, "s-full")
		mustNil(t, err)
		assertEqual(t, "surfacing", got, full)
		_, err = s.GetSurfacing(ctx, ns, "s9") // the other namespace's
		wantCode(t, err, models.ENOTFOUND)
		_, err = s.GetSurfacing(ctx, ns, "")
		wantCode(t, err, models.EINVALID)
	})
	t.Run("GetConversation", func(t *testing.T) {
		got, err := s.GetConversation(ctx, ns, "c1")
		mustNil(t, err)
		assertEqual(t, "conversation", got, state)
		_, err = s.GetConversation(ctx, other, "c1")
		wantCode(t, err, models.ENOTFOUND)
		_, err = s.GetConversation(ctx, ns, "c2") // surfaced, but no state recorded
		wantCode(t, err, models.ENOTFOUND)

		next := *state
		next.Turns, next.RecentTopics, next.UpdatedAt = 4, []string{"berlin", "flats"}, at(40)
		mustNil(t, s.RecordSurfacings(ctx, nil, &next))
		got, err = s.GetConversation(ctx, ns, "c1")
		mustNil(t, err)
		assertEqual(t, "replaced conversation", got, &next)
	})
	t.Run("FindSurfacings", func(t *testing.T) {
		tests := []struct {
			name string
			f    models.SurfacingFilter
			want []string
		}{
			{"oldest first", models.SurfacingFilter{Namespace: ns}, []string{"s-full", "s1", "s2", "s3"}},
			{"newest first", models.SurfacingFilter{Namespace: ns, Desc: true}, []string{"s3", "s2", "s1", "s-full"}},
			{"conversation", models.SurfacingFilter{Namespace: ns, ConversationID: "c1"}, []string{"s-full", "s1", "s3"}},
			{"memory", models.SurfacingFilter{Namespace: ns, MemoryID: "m1"}, []string{"s-full", "s2"}},
			{"turn", models.SurfacingFilter{Namespace: ns, TurnID: "turn-s1"}, []string{"s1"}},
			{"turn of another conversation", models.SurfacingFilter{Namespace: ns, ConversationID: "c2", TurnID: "turn-s1"}, nil},
			{"since until", models.SurfacingFilter{Namespace: ns, Since: at(10), Until: at(30)}, []string{"s1", "s2"}},
			{"limit", models.SurfacingFilter{Namespace: ns, Limit: 2, Desc: true}, []string{"s3", "s2"}},
			{"other namespace", models.SurfacingFilter{Namespace: other}, []string{"s9"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.FindSurfacings(ctx, tt.f)
				mustNil(t, err)
				ids := make([]string, len(got))
				for i, sf := range got {
					ids[i] = sf.ID
				}
				assertIDs(t, "surfacings", ids, tt.want)
			})
		}
		_, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: ns, Limit: -1})
		wantCode(t, err, models.EINVALID)
	})
	t.Run("FindSurfacingsBrief", func(t *testing.T) {
		// Brief keeps at least the fields it names, with the same rows and order.
		fullRows, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: ns})
		mustNil(t, err)
		brief, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: ns, Brief: true})
		mustNil(t, err)
		keep := func(sf *models.Surfacing) models.Surfacing {
			return models.Surfacing{Namespace: sf.Namespace, ID: sf.ID, ConversationID: sf.ConversationID,
				TurnID: sf.TurnID, MemoryID: sf.MemoryID, Mode: sf.Mode, ConvType: sf.ConvType, At: sf.At,
				Outcome: sf.Outcome, LatencyMS: sf.LatencyMS, PUse: sf.PUse,
				Components: models.Components{Confidence: sf.Components.Confidence}}
		}
		if len(brief) != len(fullRows) {
			t.Fatalf("brief: %d rows, want %d", len(brief), len(fullRows))
		}
		for i := range brief {
			assertEqual(t, "brief surfacing", keep(brief[i]), keep(fullRows[i]))
		}
		if got := keep(brief[0]); got.Components.Confidence != 0.6 || got.LatencyMS != 3.25 || got.ConvType != models.ConvDebugging {
			t.Errorf("brief s-full = %+v, want confidence 0.6, latency 3.25, type debugging", got)
		}
	})
	t.Run("ErrConflictIsAtomic", func(t *testing.T) {
		st := &models.ConversationState{Namespace: ns, ConversationID: "c7", Type: models.ConvCasual, UpdatedAt: at(50)}
		err := s.RecordSurfacings(ctx, []*models.Surfacing{surfacing(ns, "s-new", "c7", "m1", 50), surfacing(ns, "s1", "c7", "m1", 50)}, st)
		wantCode(t, err, models.ECONFLICT)
		_, err = s.GetSurfacing(ctx, ns, "s-new")
		wantCode(t, err, models.ENOTFOUND)
		_, err = s.GetConversation(ctx, ns, "c7")
		wantCode(t, err, models.ENOTFOUND)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		bad := surfacing(ns, "s-bad", "c1", "m1", 1)
		bad.Mode = "shouting"
		wantCode(t, s.RecordSurfacings(ctx, []*models.Surfacing{bad}, nil), models.EINVALID)
		wantCode(t, s.RecordSurfacings(ctx, []*models.Surfacing{surfacing("", "s-bad", "c1", "m1", 1)}, nil), models.EINVALID)
		bad = surfacing(ns, "s-bad", "c1", "m1", 1)
		bad.SettingsVersion = -1
		wantCode(t, s.RecordSurfacings(ctx, []*models.Surfacing{bad}, nil), models.EINVALID)
	})
	t.Run("CountsOnMemory", func(t *testing.T) {
		mustCreate(t, s, write(mem(ns, "m-count", "counted", at(0))))
		mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{surfacing(ns, "sc1", "c9", "m-count", 60)}, nil))
		mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{surfacing(ns, "sc2", "c9", "m-count", 70)}, nil))
		m, err := s.GetMemory(ctx, ns, "m-count")
		mustNil(t, err)
		if m.SurfaceCount != 2 || !m.LastSurfaced.Equal(at(70)) {
			t.Fatalf("after two surfacings: count %d, last %v; want 2, %v", m.SurfaceCount, m.LastSurfaced, at(70))
		}
		ms, err := s.GetMemories(ctx, ns, []string{"m-count"})
		mustNil(t, err)
		if len(ms) != 1 || ms[0].SurfaceCount != 2 {
			t.Fatalf("GetMemories disagrees with GetMemory: %+v", ms)
		}
	})
}

func testUpdate(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	mustCreate(t, s, write(fullMemory(ns, "m1")), write(fullMemory(other, "m1")))
	mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{surfacing(ns, "s1", "c1", "m1", 1)}, nil))

	t.Run("PutMemory", func(t *testing.T) {
		err := s.Update(ctx, func(tx models.Tx) error {
			m, err := tx.GetMemory(ns, "m1")
			if err != nil {
				return err
			}
			m.Confidence, m.UsageCount, m.LastUsed = 0.7, 4, at(100)
			m.SurfaceCount, m.LastSurfaced, m.RecentDismissals = 5, at(101), 0.5
			m.IrrelevantContexts = [][]string{{"taxes"}}
			m.Schedule = models.Schedule{Stability: 9, Due: at(9000), Reps: 3}
			m.Content, m.Kind = "content never changes here", models.KindAnchor
			if err := tx.PutMemory(m); err != nil {
				return err
			}
			// The transaction sees its own write.
			again, err := tx.GetMemory(ns, "m1")
			if err != nil {
				return err
			}
			if again.Confidence != 0.7 {
				return fmt.Errorf("inside the transaction confidence = %v, want 0.7", again.Confidence)
			}
			return nil
		})
		mustNil(t, err)
		want := fullMemory(ns, "m1")
		want.Confidence, want.UsageCount, want.LastUsed = 0.7, 4, at(100)
		want.SurfaceCount, want.LastSurfaced, want.RecentDismissals = 5, at(101), 0.5
		want.IrrelevantContexts = [][]string{{"taxes"}}
		want.Schedule = models.Schedule{Stability: 9, Due: at(9000), Reps: 3}
		got, err := s.GetMemory(ctx, ns, "m1")
		mustNil(t, err)
		assertEqual(t, "after PutMemory", got, want)
		gotAll, err := s.GetMemories(ctx, ns, []string{"m1"})
		mustNil(t, err)
		assertEqual(t, "GetMemories after PutMemory", gotAll, []*models.Memory{want})
		got, err = s.GetMemory(ctx, other, "m1")
		mustNil(t, err)
		assertEqual(t, "the other namespace's m1", got, fullMemory(other, "m1"))
	})
	t.Run("RollbackOnError", func(t *testing.T) {
		before, err := s.GetMemory(ctx, ns, "m1")
		mustNil(t, err)
		boom := errors.New("boom")
		err = s.Update(ctx, func(tx models.Tx) error {
			m, err := tx.GetMemory(ns, "m1")
			if err != nil {
				return err
			}
			m.Confidence = 0.01
			if err := tx.PutMemory(m); err != nil {
				return err
			}
			if err := tx.PutEdge(&models.Edge{Namespace: ns, From: "m1", To: "c:rolled-back", Type: models.EdgeMentions, Weight: 0.3}); err != nil {
				return err
			}
			if err := tx.InsertEvent(&models.Event{ID: "e-rolled-back", Namespace: ns, Type: models.EventUsed, At: at(1)}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update error = %v, want fn's error", err)
		}
		after, err := s.GetMemory(ctx, ns, "m1")
		mustNil(t, err)
		assertEqual(t, "memory after a failed update", after, before)
		es, err := s.Neighbors(ctx, ns, []string{"c:rolled-back"})
		mustNil(t, err)
		if len(es) != 0 {
			t.Fatalf("edge of a failed update is visible: %v", es)
		}
		evs, err := s.FindEvents(ctx, models.EventFilter{Namespace: ns})
		mustNil(t, err)
		if len(evs) != 0 {
			t.Fatalf("event of a failed update is visible: %v", evs)
		}
	})
	t.Run("Edges", func(t *testing.T) {
		k := models.EdgeKey{From: "c:berlin", To: "m1", Type: models.EdgeConcept}
		err := s.Update(ctx, func(tx models.Tx) error {
			_, err := tx.GetEdge(ns, k)
			wantCode(t, err, models.ENOTFOUND)
			return tx.PutEdge(&models.Edge{Namespace: ns, From: k.From, To: k.To, Type: k.Type, Weight: 0.3, CoOccurrences: 1, LastCoOccurred: at(3)})
		})
		mustNil(t, err)
		err = s.Update(ctx, func(tx models.Tx) error {
			e, err := tx.GetEdge(ns, k)
			if err != nil {
				return err
			}
			e.Weight, e.CoOccurrences, e.LastCoOccurred = e.Weight+0.1, e.CoOccurrences+1, at(4)
			return tx.PutEdge(e)
		})
		mustNil(t, err)
		es, err := s.Neighbors(ctx, ns, []string{"c:berlin"})
		mustNil(t, err)
		if len(es) != 1 || es[0].CoOccurrences != 2 || abs(es[0].Weight-0.4) > 1e-12 || !es[0].LastCoOccurred.Equal(at(4)) {
			t.Fatalf("neighbours after strengthening = %+v", es)
		}
		es, err = s.Neighbors(ctx, other, []string{"c:berlin"})
		mustNil(t, err)
		if len(es) != 0 {
			t.Fatalf("edge leaked to the other namespace: %v", es)
		}
		err = s.Update(ctx, func(tx models.Tx) error {
			return tx.PutEdge(&models.Edge{Namespace: ns, From: "a", To: "b", Type: models.EdgeConcept, Weight: 2})
		})
		wantCode(t, err, models.EINVALID)
	})
	t.Run("Surfacings", func(t *testing.T) {
		err := s.Update(ctx, func(tx models.Tx) error {
			sf, err := tx.GetSurfacing(ns, "s1")
			if err != nil {
				return err
			}
			sf.Outcome, sf.OutcomeAt = models.EventHelpful, at(7)
			return tx.PutSurfacing(sf)
		})
		mustNil(t, err)
		got, err := s.GetSurfacing(ctx, ns, "s1")
		mustNil(t, err)
		want := surfacing(ns, "s1", "c1", "m1", 1)
		want.Outcome, want.OutcomeAt = models.EventHelpful, at(7)
		assertEqual(t, "surfacing with outcome", got, want)
		pending, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: ns, NoOutcome: true})
		mustNil(t, err)
		if len(pending) != 0 {
			t.Fatalf("NoOutcome still lists %v", pending)
		}
		// Tx.FindSurfacings filters like Store.FindSurfacings and sees the transaction's writes.
		mustNil(t, s.RecordSurfacings(ctx, []*models.Surfacing{surfacing(ns, "s2", "c1", "m1", 2), surfacing(other, "s3", "c1", "m1", 2)}, nil))
		err = s.Update(ctx, func(tx models.Tx) error {
			sf, err := tx.GetSurfacing(ns, "s2")
			if err != nil {
				return err
			}
			sf.Outcome, sf.OutcomeAt = models.EventUsed, at(8)
			if err := tx.PutSurfacing(sf); err != nil {
				return err
			}
			got, err := tx.FindSurfacings(models.SurfacingFilter{Namespace: ns, ConversationID: "c1", TurnID: "turn-s2"})
			if err != nil {
				return err
			}
			assertEqual(t, "Tx.FindSurfacings", got, []*models.Surfacing{sf})
			all, err := tx.FindSurfacings(models.SurfacingFilter{Namespace: ns, MemoryID: "m1", Desc: true, Limit: 1})
			if err != nil {
				return err
			}
			assertEqual(t, "Tx.FindSurfacings newest", all, []*models.Surfacing{sf})
			_, err = tx.FindSurfacings(models.SurfacingFilter{Namespace: ns, Limit: -1})
			wantCode(t, err, models.EINVALID)
			return nil
		})
		mustNil(t, err)
		// A full replacement may move a surfacing to another turn and time; filters follow it.
		err = s.Update(ctx, func(tx models.Tx) error {
			sf, err := tx.GetSurfacing(ns, "s1")
			if err != nil {
				return err
			}
			sf.TurnID, sf.At, sf.Score = "turn-moved", at(3), 0.25
			return tx.PutSurfacing(sf)
		})
		mustNil(t, err)
		moved, err := s.FindSurfacings(ctx, models.SurfacingFilter{Namespace: ns, TurnID: "turn-moved"})
		mustNil(t, err)
		want.TurnID, want.At, want.Score = "turn-moved", at(3), 0.25
		assertEqual(t, "moved surfacing", moved, []*models.Surfacing{want})
		err = s.Update(ctx, func(tx models.Tx) error {
			_, err := tx.GetSurfacing(other, "s1")
			wantCode(t, err, models.ENOTFOUND)
			return tx.PutSurfacing(surfacing(ns, "s-missing", "c1", "m1", 1))
		})
		wantCode(t, err, models.ENOTFOUND)
	})
	t.Run("InsertEvent", func(t *testing.T) {
		ev := &models.Event{ID: "e1", Namespace: ns, SurfacingID: "s1", MemoryID: "m1", ConversationID: "c1",
			Type: models.EventUsed, At: at(8), Concepts: []string{"berlin"}}
		mustNil(t, s.Update(ctx, func(tx models.Tx) error { return tx.InsertEvent(ev) }))
		var dupErr error
		mustNil(t, s.Update(ctx, func(tx models.Tx) error {
			dupErr = tx.InsertEvent(&models.Event{ID: "e1", Namespace: ns, Type: models.EventDismissed, At: at(9)})
			// A duplicate is an answer, not a failure: the transaction goes on.
			return tx.InsertEvent(&models.Event{ID: "e2", Namespace: ns, Type: models.EventIgnored, At: at(9), Implicit: true})
		}))
		wantCode(t, dupErr, models.EDUPLICATE)
		// The same id in another namespace is another event.
		mustNil(t, s.Update(ctx, func(tx models.Tx) error {
			return tx.InsertEvent(&models.Event{ID: "e1", Namespace: other, Type: models.EventUsed, At: at(8)})
		}))
		evs, err := s.FindEvents(ctx, models.EventFilter{Namespace: ns})
		mustNil(t, err)
		// Seq numbers each namespace's events in application order; a duplicate takes none.
		if ev.Seq != 1 {
			t.Errorf("e1 seq = %d, want 1", ev.Seq)
		}
		assertEqual(t, "events", evs, []*models.Event{ev, {ID: "e2", Namespace: ns, Type: models.EventIgnored, At: at(9), Implicit: true, Seq: 2}})
		// Application order, whatever the times: e0 is dated first but applied third.
		mustNil(t, s.Update(ctx, func(tx models.Tx) error {
			return tx.InsertEvent(&models.Event{ID: "e0", Namespace: ns, Type: models.EventUsed, At: at(1)})
		}))
		bySeq, err := s.FindEvents(ctx, models.EventFilter{Namespace: ns, BySeq: true, AfterSeq: 1})
		mustNil(t, err)
		if len(bySeq) != 2 || bySeq[0].ID != "e2" || bySeq[1].ID != "e0" || bySeq[1].Seq != 3 {
			t.Errorf("events after seq 1 by seq: %v, want e2 (2), e0 (3)", bySeq)
		}
		otherEvs, err := s.FindEvents(ctx, models.EventFilter{Namespace: other, BySeq: true})
		mustNil(t, err)
		if len(otherEvs) != 1 || otherEvs[0].Seq != 1 {
			t.Errorf("the other namespace's events %v, want one at seq 1", otherEvs)
		}
		err = s.Update(ctx, func(tx models.Tx) error {
			return tx.InsertEvent(&models.Event{ID: "e3", Namespace: ns, Type: "shrugged", At: at(9)})
		})
		wantCode(t, err, models.EINVALID)
	})
	t.Run("GetEvent", func(t *testing.T) {
		ev := &models.Event{ID: "g1", Namespace: ns, SurfacingID: "s1", MemoryID: "m1", ConversationID: "c1",
			Type: models.EventHelpful, At: at(10), Concepts: []string{"berlin"}}
		mustNil(t, s.Update(ctx, func(tx models.Tx) error { return tx.InsertEvent(ev) }))
		mustNil(t, s.Update(ctx, func(tx models.Tx) error {
			got, err := tx.GetEvent(ns, "g1")
			mustNil(t, err)
			assertEqual(t, "g1", got, ev)
			// The transaction's own insert is seen; a missing id and another namespace's are not.
			own := &models.Event{ID: "g2", Namespace: ns, SurfacingID: "s2", Type: models.EventUsed, At: at(11)}
			mustNil(t, tx.InsertEvent(own))
			got, err = tx.GetEvent(ns, "g2")
			mustNil(t, err)
			assertEqual(t, "g2 in its transaction", got, own)
			_, err = tx.GetEvent(ns, "g-missing")
			wantCode(t, err, models.ENOTFOUND)
			_, err = tx.GetEvent(other, "g1")
			wantCode(t, err, models.ENOTFOUND)
			_, err = tx.GetEvent(ns, "")
			wantCode(t, err, models.EINVALID)
			return nil
		}))
	})
	t.Run("TxState", func(t *testing.T) {
		// State set in a transaction is the store's state once it commits, and not when it
		// fails.
		mustNil(t, s.Update(ctx, func(tx models.Tx) error {
			v, err := tx.GetState("learn/test")
			if err != nil || v != "" {
				t.Errorf("missing key = %q, %v; want \"\"", v, err)
			}
			return tx.SetState("learn/test", "one")
		}))
		err := s.Update(ctx, func(tx models.Tx) error {
			if v, err := tx.GetState("learn/test"); err != nil || v != "one" {
				t.Errorf("in tx = %q, %v; want one", v, err)
			}
			mustNil(t, tx.SetState("learn/test", "two"))
			return models.Errorf(models.EINVALID, "abort")
		})
		wantCode(t, err, models.EINVALID)
		if v, err := s.GetState(ctx, "learn/test"); err != nil || v != "one" {
			t.Errorf("after an aborted tx = %q, %v; want one", v, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		err := s.Update(ctx, func(tx models.Tx) error {
			_, err := tx.GetMemory(ns, "missing")
			return err
		})
		wantCode(t, err, models.ENOTFOUND)
		err = s.Update(ctx, func(tx models.Tx) error {
			return tx.PutMemory(mem(ns, "missing", "x", at(0)))
		})
		wantCode(t, err, models.ENOTFOUND)
		err = s.Update(ctx, func(tx models.Tx) error {
			_, err := tx.GetMemory(other, "m9")
			return err
		})
		wantCode(t, err, models.ENOTFOUND)
	})
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// testUpdateSerializable runs read-increment-write transactions concurrently; any lost
// update shows as a smaller total.
func testUpdateSerializable(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	mustCreate(t, s, write(mem(ns, "m1", "counted", at(0))))
	goroutines, increments := 16, 200
	if testing.Short() {
		increments = 20
	}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Go(func() {
			for range increments {
				err := s.Update(ctx, func(tx models.Tx) error {
					m, err := tx.GetMemory(ns, "m1")
					if err != nil {
						return err
					}
					m.UsageCount++
					return tx.PutMemory(m)
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Update: %v", err)
	}
	got, err := s.GetMemory(ctx, ns, "m1")
	mustNil(t, err)
	if want := goroutines * increments; got.UsageCount != want {
		t.Fatalf("UsageCount = %d, want %d: updates were lost", got.UsageCount, want)
	}
}

func testFindEvents(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	evs := []*models.Event{
		{ID: "e3", Namespace: ns, Type: models.EventUsed, At: at(30)},
		{ID: "e1", Namespace: ns, Type: models.EventHelpful, At: at(10), MemoryID: "m1", ConversationID: "c1"},
		{ID: "e2b", Namespace: ns, Type: models.EventIgnored, At: at(20)},
		{ID: "e2a", Namespace: ns, Type: models.EventDismissed, At: at(20), Concepts: []string{"tax"}},
		{ID: "o1", Namespace: other, Type: models.EventUsed, At: at(15)},
	}
	mustNil(t, s.Update(ctx, func(tx models.Tx) error {
		for _, e := range evs {
			if err := tx.InsertEvent(e); err != nil {
				return err
			}
		}
		return nil
	}))
	tests := []struct {
		name string
		f    models.EventFilter
		want []string
	}{
		{"oldest first", models.EventFilter{Namespace: ns}, []string{"e1", "e2a", "e2b", "e3"}},
		{"since until", models.EventFilter{Namespace: ns, Since: at(20), Until: at(30)}, []string{"e2a", "e2b"}},
		{"limit", models.EventFilter{Namespace: ns, Limit: 2}, []string{"e1", "e2a"}},
		{"other namespace", models.EventFilter{Namespace: other}, []string{"o1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.FindEvents(ctx, tt.f)
			mustNil(t, err)
			ids := make([]string, len(got))
			for i, e := range got {
				ids[i] = e.ID
			}
			assertIDs(t, "events", ids, tt.want)
		})
	}
	got, err := s.FindEvents(ctx, models.EventFilter{Namespace: ns, Limit: 1})
	mustNil(t, err)
	assertEqual(t, "full event", got, []*models.Event{evs[1]})
	_, err = s.FindEvents(ctx, models.EventFilter{Namespace: ns, Limit: -1})
	wantCode(t, err, models.EINVALID)

	// CountEvents tallies the same filters by type and implicit, in type order.
	mustNil(t, s.Update(ctx, func(tx models.Tx) error {
		return tx.InsertEvent(&models.Event{ID: "e4", Namespace: ns, Type: models.EventIgnored, At: at(40), Implicit: true})
	}))
	counts := []struct {
		name string
		f    models.EventFilter
		want []models.EventTally
	}{
		{"count all", models.EventFilter{Namespace: ns}, []models.EventTally{
			{Type: models.EventDismissed, Count: 1}, {Type: models.EventHelpful, Count: 1},
			{Type: models.EventIgnored, Count: 1}, {Type: models.EventIgnored, Implicit: true, Count: 1},
			{Type: models.EventUsed, Count: 1}}},
		{"count since until", models.EventFilter{Namespace: ns, Since: at(20), Until: at(30)}, []models.EventTally{
			{Type: models.EventDismissed, Count: 1}, {Type: models.EventIgnored, Count: 1}}},
		{"count other namespace", models.EventFilter{Namespace: other}, []models.EventTally{{Type: models.EventUsed, Count: 1}}},
		{"count none", models.EventFilter{Namespace: ns, Since: at(50)}, nil},
	}
	for _, tt := range counts {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.CountEvents(ctx, tt.f)
			mustNil(t, err)
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			assertEqual(t, "tallies", got, tt.want)
		})
	}
	_, err = s.CountEvents(ctx, models.EventFilter{Namespace: "bad ns!"})
	wantCode(t, err, models.EINVALID)
}
