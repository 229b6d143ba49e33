package engagement

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

// poisonStore fails any transaction that logs an event with id "poison", as a store whose
// disk fails mid-write would.
type poisonStore struct{ models.Store }

func (p poisonStore) Update(ctx context.Context, fn func(models.Tx) error) error {
	return p.Store.Update(ctx, func(tx models.Tx) error { return fn(poisonTx{tx}) })
}

type poisonTx struct{ models.Tx }

func (t poisonTx) InsertEvent(e *models.Event) error {
	if e.ID == "poison" {
		return errors.New("disk on fire")
	}
	return t.Tx.InsertEvent(e)
}

// TestGroupFailureIsolatesRequests applies three requests as one group, the second of which
// makes the store fail: the group's transaction rolls back, each request is retried alone,
// and only the failing one reports the error. Nothing is applied twice or half.
func TestGroupFailureIsolatesRequests(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if err := st.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	var ws []*models.MemoryWrite
	for _, ns := range []string{"a", "b"} {
		ws = append(ws, &models.MemoryWrite{Memory: &models.Memory{ID: "m1", Namespace: ns, Kind: models.KindFact, Content: "x",
			CreatedAt: now.Add(-time.Hour), Confidence: 0.5}})
	}
	if err := st.CreateMemories(ctx, ws); err != nil {
		t.Fatal(err)
	}
	// Each event reports on a surfacing of its own, in conversation "c" (one outcome per
	// surfacing): event id e is about surfacing "s-"+e, which the memory+conversation form
	// finds as m1's latest in c at or before the event's time.
	var ss []*models.Surfacing
	for i, id := range []string{"e1", "e2", "e3", "poison"} {
		for _, ns := range []string{"a", "b"} {
			ss = append(ss, &models.Surfacing{ID: "s-" + id, Namespace: ns, ConversationID: "c", TurnID: "t-" + id, MemoryID: "m1",
				Mode: models.ModeAmbient, At: now.Add(time.Duration(i-10) * time.Minute)})
		}
	}
	if err := st.RecordSurfacings(ctx, ss, nil); err != nil {
		t.Fatal(err)
	}
	s := NewService(poisonStore{st}, ServiceOptions{Now: func() time.Time { return now }})
	req := func(ns string, ids ...string) *request {
		r := &request{ctx: ctx, ns: ns, now: now, policy: s.policy(ns), done: make(chan struct{}), lead: make(chan struct{}, 1)}
		for _, id := range ids {
			ev, err := s.check(ns, &models.Event{ID: id, SurfacingID: "s-" + id, Type: models.EventUsed}, now)
			if err != nil {
				t.Fatal(err)
			}
			r.checked = append(r.checked, ev)
			r.events++
		}
		return r
	}
	good1, bad, good2 := req("a", "e1", "e2"), req("a", "e3", "poison"), req("b", "e1")
	s.applyGroup([]*request{good1, bad, good2})

	for _, c := range []struct {
		name string
		r    *request
		err  bool
	}{{"first", good1, false}, {"poisoned", bad, true}, {"other namespace", good2, false}} {
		select {
		case <-c.r.done:
		default:
			t.Errorf("%s: not done", c.name)
		}
		if (c.r.err != nil) != c.err {
			t.Errorf("%s: err = %v, want error %v", c.name, c.r.err, c.err)
		}
		if !c.err {
			for i, res := range c.r.results {
				if res.Status != StatusApplied {
					t.Errorf("%s event %d: %+v", c.name, i, res)
				}
			}
		}
	}
	for _, c := range []struct {
		ns     string
		usage  int
		events int
	}{{"a", 2, 2}, {"b", 1, 1}} {
		m, err := st.GetMemory(ctx, c.ns, "m1")
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.FindEvents(ctx, models.EventFilter{Namespace: c.ns})
		if err != nil {
			t.Fatal(err)
		}
		if m.UsageCount != c.usage || len(evs) != c.events {
			t.Errorf("namespace %s: usage %d, %d events logged; want %d and %d", c.ns, m.UsageCount, len(evs), c.usage, c.events)
		}
	}
}
