package ingest_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
)

// TestEdit: an edit reaches the memory and its chunks, through a chunk's id too; invalid
// fields are refused by name and write nothing; change's error stops the edit.
func TestEdit(t *testing.T) {
	svc, st := newService(t)
	ctx := context.Background()
	text := strings.Repeat("The lighthouse keeper logged every passing ship in a leather book. ", 20)
	out, err := svc.Ingest(ctx, "a", []*models.Memory{
		{Kind: models.KindDocument, Content: text, Importance: 0.4},
		{Kind: models.KindFact, Content: "The keeper retired in 1962.", Importance: 0.4},
	})
	if err != nil {
		t.Fatal(err)
	}
	doc, fact := out[0], out[1]
	if doc.ChunkCount < 2 {
		t.Fatalf("the document was not chunked: %d chunks", doc.ChunkCount)
	}
	units := []string{doc.ID}
	for i := range doc.ChunkCount {
		units = append(units, ids.Chunk(doc.ID, i))
	}
	check := func(t *testing.T, want ingest.Edit) {
		t.Helper()
		ms, err := st.GetMemories(ctx, "a", units)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if got := ingest.EditOf(m); got.Importance != want.Importance || !got.ValidAt.Equal(want.ValidAt) ||
				!got.InvalidAt.Equal(want.InvalidAt) || got.Sensitive != want.Sensitive {
				t.Fatalf("%s: %+v, want %+v", m.ID, got, want)
			}
		}
	}

	retired := time.Date(1962, 6, 1, 0, 0, 0, 0, time.FixedZone("X", 3600))
	var seen ingest.Edit
	m, err := svc.Edit(ctx, "a", units[2], func(cur ingest.Edit) (ingest.Edit, error) { // a chunk's id
		seen = cur
		cur.Importance, cur.InvalidAt, cur.Sensitive = 0.9, retired, true
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen.Importance != 0.4 || !seen.InvalidAt.IsZero() {
		t.Errorf("change saw %+v, want the stored fields", seen)
	}
	want := ingest.Edit{Importance: 0.9, InvalidAt: retired.UTC(), Sensitive: true}
	if m.ID != doc.ID || m.Content != text || m.Embedding != nil || ingest.EditOf(m) != want || m.InvalidAt.Location() != time.UTC {
		t.Errorf("Edit returned %s %+v (content kept: %v), want the document %+v in UTC", m.ID, ingest.EditOf(m), m.Content == text, want)
	}
	check(t, want)
	if f, err := st.GetMemory(ctx, "a", fact.ID); err != nil || f.Importance != 0.4 || f.Sensitive {
		t.Errorf("the other memory changed: %+v, %v", f, err)
	}

	for _, tc := range []struct {
		name  string
		edit  func(*ingest.Edit)
		field string
	}{
		{"importance over 1", func(e *ingest.Edit) { e.Importance = 1.5 }, "importance"},
		{"importance NaN", func(e *ingest.Edit) { e.Importance = math.NaN() }, "importance"},
		{"invalid before valid", func(e *ingest.Edit) { e.ValidAt = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC) }, "invalid_at"},
		{"out of range", func(e *ingest.Edit) { e.ValidAt = time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC) }, "valid_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Edit(ctx, "a", doc.ID, func(cur ingest.Edit) (ingest.Edit, error) {
				cur.Importance = 0.1 // would be written with the bad field
				tc.edit(&cur)
				return cur, nil
			})
			if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != tc.field {
				t.Fatalf("err = %v, want invalid %s", err, tc.field)
			}
			check(t, want)
		})
	}
	boom := errors.New("boom")
	if _, err := svc.Edit(ctx, "a", doc.ID, func(cur ingest.Edit) (ingest.Edit, error) { return ingest.Edit{}, boom }); !errors.Is(err, boom) {
		t.Errorf("change's error: %v", err)
	}
	check(t, want)
	if _, err := svc.Edit(ctx, "a", "01JNOSUCHMEMORY0000000000", func(cur ingest.Edit) (ingest.Edit, error) { return cur, nil }); models.ErrorCode(err) != models.ENOTFOUND {
		t.Errorf("missing memory: %v", err)
	}
	if _, err := svc.Edit(ctx, "a b", doc.ID, func(cur ingest.Edit) (ingest.Edit, error) { return cur, nil }); models.ErrorField(err) != "namespace" {
		t.Errorf("bad namespace: %v", err)
	}
	// Clearing: the zero times are "since it was created" and "still true".
	if _, err := svc.Edit(ctx, "a", doc.ID, func(ingest.Edit) (ingest.Edit, error) { return ingest.Edit{Importance: 0.5}, nil }); err != nil {
		t.Fatal(err)
	}
	check(t, ingest.Edit{Importance: 0.5})
}
