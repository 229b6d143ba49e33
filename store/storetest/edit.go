package storetest

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// testEditMemory: Tx.EditMemory writes importance, validity and sensitivity to a memory and
// its chunks, nothing else, and only on commit; reads inside the transaction see it.
func testEditMemory(t *testing.T, open func(t *testing.T) models.Store) {
	s := open(t)
	parent := fullMemory(ns, "m1")
	parent.Embedding = nil // a chunked memory's vectors are its chunks'
	var chunks []*models.Memory
	for i, text := range []string{"Caroline moved", "to Berlin in May."} {
		c := mem(ns, "m1-"+string(rune('0'+i)), text, parent.CreatedAt)
		c.Kind, c.ValidAt, c.InvalidAt, c.Importance, c.Sensitive = parent.Kind, parent.ValidAt, parent.InvalidAt, parent.Importance, parent.Sensitive
		c.Embedding = []float32{float32(1 - i), float32(i), 0, 0}
		chunks = append(chunks, c)
	}
	mustCreate(t, s, write(parent, chunks...), write(fullMemory(ns, "m2")), write(fullMemory(other, "m1")))
	units := []string{"m1", "m1-0", "m1-1"}
	read := func(t *testing.T) []*models.Memory {
		t.Helper()
		ms, err := s.GetMemories(ctx, ns, units)
		mustNil(t, err)
		return ms
	}
	before := read(t)
	edited := func(ms []*models.Memory, importance float64, valid, invalid time.Time, sensitive bool) []*models.Memory {
		var out []*models.Memory
		for _, m := range ms {
			c := *m
			c.Importance, c.ValidAt, c.InvalidAt, c.Sensitive = importance, valid, invalid, sensitive
			out = append(out, &c)
		}
		return out
	}
	edit := func(id string, f func(m *models.Memory)) error {
		return s.Update(ctx, func(tx models.Tx) error {
			m, err := tx.GetMemory(ns, id)
			if err != nil {
				return err
			}
			f(m)
			return tx.EditMemory(m)
		})
	}

	t.Run("RollbackOnError", func(t *testing.T) {
		boom := errors.New("boom")
		err := s.Update(ctx, func(tx models.Tx) error {
			m, err := tx.GetMemory(ns, "m1")
			if err != nil {
				return err
			}
			m.Importance = 0.1
			if err := tx.EditMemory(m); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update = %v, want boom", err)
		}
		assertEqual(t, "after a rolled-back edit", read(t), before)
	})
	t.Run("OK", func(t *testing.T) {
		err := s.Update(ctx, func(tx models.Tx) error {
			m, err := tx.GetMemory(ns, "m1")
			if err != nil {
				return err
			}
			m.Importance, m.ValidAt, m.InvalidAt, m.Sensitive = 0.9, at(-120), at(30), false
			// Only the editable fields are written.
			m.Content, m.Kind, m.Confidence, m.UsageCount, m.Domains = "never written", models.KindAnchor, 0.01, 99, []string{"x"}
			if err := tx.EditMemory(m); err != nil {
				return err
			}
			// The transaction sees its own edit, on the chunks too.
			for _, id := range units {
				got, err := tx.GetMemory(ns, id)
				if err != nil {
					return err
				}
				if got.Importance != 0.9 || !got.InvalidAt.Equal(at(30)) || got.Sensitive {
					return errors.New("inside the transaction " + id + " is not edited")
				}
			}
			return nil
		})
		mustNil(t, err)
		want := edited(before, 0.9, at(-120), at(30), false)
		assertEqual(t, "GetMemories after the edit", read(t), want)
		for i, id := range units {
			got, err := s.GetMemory(ctx, ns, id)
			mustNil(t, err)
			assertEqual(t, "GetMemory "+id, got, want[i])
		}
		view, err := s.ViewMemories(ctx, ns, units, true)
		mustNil(t, err)
		assertEqual(t, "ViewMemories after the edit", view, want)
		found, _, err := s.FindMemories(ctx, models.MemoryFilter{Namespace: ns, Limit: 10})
		mustNil(t, err)
		for _, m := range found {
			if m.ID == "m1" {
				assertEqual(t, "FindMemories' m1", m, want[0])
			}
		}
		// The other memories are untouched.
		got, err := s.GetMemory(ctx, ns, "m2")
		mustNil(t, err)
		assertEqual(t, "m2", got, fullMemory(ns, "m2"))
		got, err = s.GetMemory(ctx, other, "m1")
		mustNil(t, err)
		assertEqual(t, "the other namespace's m1", got, fullMemory(other, "m1"))
	})
	t.Run("Clear", func(t *testing.T) {
		mustNil(t, edit("m1", func(m *models.Memory) {
			m.ValidAt, m.InvalidAt, m.Importance, m.Sensitive = time.Time{}, time.Time{}, 0, true
		}))
		assertEqual(t, "after clearing the times", read(t), edited(before, 0, time.Time{}, time.Time{}, true))
	})
	t.Run("Errors", func(t *testing.T) {
		wantCode(t, edit("m1-0", func(*models.Memory) {}), models.EINVALID) // a chunk
		wantCode(t, edit("m1", func(m *models.Memory) { m.Importance = math.NaN() }), models.EINVALID)
		wantCode(t, edit("m1", func(m *models.Memory) { m.InvalidAt = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }), models.EINVALID)
		err := s.Update(ctx, func(tx models.Tx) error {
			return tx.EditMemory(&models.Memory{Namespace: ns, ID: "never", Importance: 0.5})
		})
		wantCode(t, err, models.ENOTFOUND)
		err = s.Update(ctx, func(tx models.Tx) error { return tx.EditMemory(&models.Memory{Namespace: "bad ns", ID: "m1"}) })
		wantCode(t, err, models.EINVALID)
		assertEqual(t, "after the refused edits", read(t), edited(before, 0, time.Time{}, time.Time{}, true))
	})
}
