package ingest_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/sqlite"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newService(t *testing.T) (*ingest.Service, models.Store) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"), sqlite.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ingest.New(st, embed.NewLocal(0), ingest.Options{Now: func() time.Time { return t0 }}), st
}

func TestValidationNamesTheFieldAndWritesNothing(t *testing.T) {
	svc, st := newService(t)
	for _, tc := range []struct {
		name  string
		ns    string
		ms    []*models.Memory
		code  string
		field string
	}{
		{"bad namespace", "a b", []*models.Memory{{Kind: models.KindFact, Content: "x"}}, models.EINVALID, "namespace"},
		{"empty batch", "a", nil, models.EINVALID, "memories"},
		{"single: field plain", "a", []*models.Memory{{Kind: "poem", Content: "x"}}, models.EINVALID, "kind"},
		{"batch: indexed field", "a", []*models.Memory{{Kind: models.KindFact, Content: "ok"}, {Kind: models.KindFact, Content: "  "}}, models.EINVALID, "memories[1].content"},
		{"oversized", "a", []*models.Memory{{Kind: models.KindFact, Content: strings.Repeat("x", models.MaxContentBytes+1)}}, models.ETOOLARGE, "content"},
		{"null item", "a", []*models.Memory{{Kind: models.KindFact, Content: "ok"}, nil}, models.EINVALID, "memories[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Ingest(context.Background(), tc.ns, tc.ms)
			if got := models.ErrorCode(err); got != tc.code || models.ErrorField(err) != tc.field {
				t.Fatalf("err = %v (code %s, field %q), want %s on %q", err, got, models.ErrorField(err), tc.code, tc.field)
			}
		})
	}
	_, total, err := st.FindMemories(context.Background(), models.MemoryFilter{Namespace: "a"})
	if err != nil || total != 0 {
		t.Fatalf("after invalid batches: %d memories, %v; want 0", total, err)
	}
}

func TestIngestAssignsAndLinks(t *testing.T) {
	svc, st := newService(t)
	ctx := context.Background()
	conv := models.Source{ConversationID: "c1", Speaker: "Nadia"}
	first, err := svc.Ingest(ctx, "a", []*models.Memory{
		{Kind: models.KindTurn, Content: "Nadia: I keep bees on the roof of the old cannery.", Source: conv, CreatedAt: t0.Add(-2 * time.Minute)},
		{Kind: models.KindTurn, Content: "Omar: Do the bees mind the harbour wind?", Source: conv},
	})
	if err != nil {
		t.Fatal(err)
	}
	second, err := svc.Ingest(ctx, "a", []*models.Memory{
		{Kind: models.KindFact, Content: "Nadia sells honey at the Saturday market.", Source: conv, Triggers: []string{"honey", "market"},
			Triple: &models.Triple{Subject: "Nadia", Predicate: "sells", Object: "honey"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := first[0], first[1], second[0]
	if a.ID == "" || a.Confidence != models.DefaultConfidence || !a.CreatedAt.Equal(t0.Add(-2*time.Minute)) || !b.CreatedAt.Equal(t0) {
		t.Fatalf("assigned fields: %+v / %+v", a, b)
	}
	if !contains(a.Concepts, "nadia") || !contains(a.Concepts, "bees") || !contains(a.Concepts, "cannery") {
		t.Fatalf("concepts of a = %q", a.Concepts)
	}
	edges, err := st.Neighbors(ctx, "a", []string{b.ID})
	if err != nil {
		t.Fatal(err)
	}
	var temporal []string
	for _, e := range edges {
		if e.Type == models.EdgeTemporal {
			temporal = append(temporal, e.From+">"+e.To)
		}
	}
	// b follows a (same batch) and precedes c (the next batch): the conversation is a chain.
	want := []string{a.ID + ">" + b.ID, b.ID + ">" + c.ID}
	if len(temporal) != 2 || !contains(temporal, want[0]) || !contains(temporal, want[1]) {
		t.Fatalf("temporal edges of b = %q, want %q", temporal, want)
	}
	rel, err := st.Neighbors(ctx, "a", []string{models.ConceptID("nadia")})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, e := range rel {
		if e.Type == models.EdgeRelation && e.To == models.ConceptID("honey") && e.Predicate == "sells" && e.Fact == c.ID {
			found = true
		}
	}
	if !found {
		t.Fatalf("no relation edge nadia -sells-> honey among %d edges", len(rel))
	}
	cs, err := st.GetConcepts(ctx, "a", []string{"nadia", "bees", "honey"})
	if err != nil || len(cs) != 3 {
		t.Fatalf("concepts = %+v, %v", cs, err)
	}
	for _, cn := range cs {
		if cn.Name == "nadia" && cn.Mentions != 2 { // in a (speaker and text) and in c
			t.Fatalf("nadia mentions = %d, want 2", cn.Mentions)
		}
	}
}

func TestLongContentIsChunked(t *testing.T) {
	svc, st := newService(t)
	ctx := context.Background()
	text := strings.Repeat("The lighthouse keeper logged every passing ship in a leather book. ", 40) // ~2,700 chars
	out, err := svc.Ingest(ctx, "a", []*models.Memory{{Kind: models.KindDocument, Content: text}})
	if err != nil {
		t.Fatal(err)
	}
	m := out[0]
	if m.ChunkCount < 6 || m.Content != text {
		t.Fatalf("chunk count %d (want ≥ 6), content kept whole: %v", m.ChunkCount, m.Content == text)
	}
	for i := 0; i < m.ChunkCount; i++ {
		ch, err := st.GetMemory(ctx, "a", m.ID+"-"+strconv.Itoa(i))
		if err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if ch.ParentID != m.ID || ch.ChunkIndex != i || len([]rune(ch.Content)) > 500 || !strings.Contains(text, ch.Content) {
			t.Fatalf("chunk %d = parent %s index %d, %d runes", i, ch.ParentID, ch.ChunkIndex, len([]rune(ch.Content)))
		}
	}
	if _, err := st.GetMemory(ctx, "a", m.ID+"-"+strconv.Itoa(m.ChunkCount)); models.ErrorCode(err) != models.ENOTFOUND {
		t.Fatalf("one chunk too many exists: %v", err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
