package ingest_test

import (
	"context"
	"errors"
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

// TestTimesOutOfRange: dates before 1970 are valid (historic documents; their ids clamp),
// dates the store cannot hold are 400s naming the request's field — they used to panic in
// ids.New (a 500 for the whole batch) or be named by the store's internal path
// ("writes[0].memory.created_at").
func TestTimesOutOfRange(t *testing.T) {
	svc, st := newService(t)
	ctx := context.Background()
	old := time.Date(1850, 6, 1, 0, 0, 0, 0, time.UTC)
	got, err := svc.Ingest(ctx, "a", []*models.Memory{{Kind: models.KindDocument, Content: "The Great Exhibition closes.", CreatedAt: old, ValidAt: old}})
	if err != nil {
		t.Fatalf("ingest of an 1850 memory: %v", err)
	}
	m, err := st.GetMemory(ctx, "a", got[0].ID)
	if err != nil || !m.CreatedAt.Equal(old) || !m.ValidAt.Equal(old) {
		t.Fatalf("stored 1850 memory = %+v, %v; want created_at and valid_at %v", m, err, old)
	}

	ok := &models.Memory{Kind: models.KindFact, Content: "fine"}
	for _, tc := range []struct {
		name  string
		ms    []*models.Memory
		field string
	}{
		{"single, year 1600", []*models.Memory{{Kind: models.KindFact, Content: "x", CreatedAt: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)}}, "created_at"},
		{"single, year 2300", []*models.Memory{{Kind: models.KindFact, Content: "x", CreatedAt: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}}, "created_at"},
		{"batch, valid_at in 2262", []*models.Memory{ok, {Kind: models.KindFact, Content: "x", ValidAt: ingest.MaxTime}}, "memories[1].valid_at"},
		{"batch, invalid_at before 1678", []*models.Memory{ok, ok, {Kind: models.KindFact, Content: "x", InvalidAt: ingest.MinTime.Add(-time.Nanosecond)}}, "memories[2].invalid_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.Ingest(ctx, "b", tc.ms)
			if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != tc.field {
				t.Fatalf("err = %v, want invalid naming %q", err, tc.field)
			}
		})
	}
	if _, n, _ := st.FindMemories(ctx, models.MemoryFilter{Namespace: "b"}); n != 0 {
		t.Errorf("%d memories written by rejected batches, want 0", n)
	}
	// The bounds themselves are inside.
	if _, err := svc.Ingest(ctx, "c", []*models.Memory{{Kind: models.KindFact, Content: "x", CreatedAt: ingest.MinTime}, {Kind: models.KindFact, Content: "y", CreatedAt: ingest.MaxTime.Add(-time.Millisecond)}}); err != nil {
		t.Errorf("ingest at the bounds: %v", err)
	}
}

// failingEmbedder fails as an OpenAI-compatible embedder does when its server is down: the
// error names the server's address.
type failingEmbedder struct{}

func (failingEmbedder) Name() string { return "failing" }
func (failingEmbedder) Dims() int    { return 8 }
func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New(`Post "http://10.1.2.3:8080/v1/embeddings": dial tcp 10.1.2.3:8080: connect: connection refused`)
}

// TestEmbedderDownIsUnavailableWithoutItsAddress: the client reads a 503 with a safe
// message; the address stays in the error chain, for the log.
func TestEmbedderDownIsUnavailableWithoutItsAddress(t *testing.T) {
	_, st := newService(t)
	svc := ingest.New(st, failingEmbedder{})
	_, err := svc.Ingest(context.Background(), "a", []*models.Memory{{Kind: models.KindFact, Content: "x"}})
	if models.ErrorCode(err) != models.EUNAVAILABLE {
		t.Fatalf("err = %v, want unavailable", err)
	}
	if msg := models.ErrorMessage(err); strings.Contains(msg, "10.1.2.3") || strings.Contains(msg, "dial") {
		t.Errorf("client message %q carries the embedder's address", msg)
	}
	if !strings.Contains(err.Error(), "10.1.2.3:8080") {
		t.Errorf("error %q lost the cause the log needs", err)
	}
}
