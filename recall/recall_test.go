package recall_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
	"github.com/salience-ai/salience/predict"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/store/sqlite"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// countingStore is the real store with every search and graph-walk method of the store
// contract counted, to prove which ran: startup mode must list, never search or walk.
type countingStore struct {
	models.Store
	searches atomic.Int64
}

func (s *countingStore) SearchText(ctx context.Context, ns, q string, k int) ([]models.Hit, error) {
	s.searches.Add(1)
	return s.Store.SearchText(ctx, ns, q, k)
}

func (s *countingStore) SearchVector(ctx context.Context, ns string, v []float32, k int) ([]models.Hit, error) {
	s.searches.Add(1)
	return s.Store.SearchVector(ctx, ns, v, k)
}

func (s *countingStore) Neighbors(ctx context.Context, ns string, ids []string) ([]*models.Edge, error) {
	s.searches.Add(1)
	return s.Store.Neighbors(ctx, ns, ids)
}

func (s *countingStore) StrongestNeighbors(ctx context.Context, ns string, ids []string, perNode int, types []models.EdgeType) ([]*models.Edge, error) {
	s.searches.Add(1)
	return s.Store.StrongestNeighbors(ctx, ns, ids, perNode, types)
}

func (s *countingStore) GetConcepts(ctx context.Context, ns string, names []string) ([]*models.Concept, error) {
	s.searches.Add(1)
	return s.Store.GetConcepts(ctx, ns, names)
}

func (s *countingStore) ScanEdges(ctx context.Context, ns string, after models.EdgeKey, limit int) ([]*models.Edge, error) {
	s.searches.Add(1)
	return s.Store.ScanEdges(ctx, ns, after, limit)
}

func (s *countingStore) Queue(ctx context.Context, ns string, limit int) ([]*models.ResurfaceItem, error) {
	s.searches.Add(1)
	return s.Store.Queue(ctx, ns, limit)
}

type env struct {
	store *countingStore
	ing   *ingest.Service
	p     *recall.Pipeline
	emb   embed.Embedder
}

func newEnv(t testing.TB) *env {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{Store: st}
	emb := embed.NewLocal(0)
	return &env{
		store: cs,
		ing:   ingest.New(cs, emb, ingest.Options{Now: func() time.Time { return t0 }}),
		p:     recall.New(cs, emb, recall.Options{Now: func() time.Time { return t0 }, Seed: 1}),
		emb:   emb,
	}
}

func (e *env) add(t testing.TB, ns string, ms ...*models.Memory) []*models.Memory {
	t.Helper()
	out, err := e.ing.Ingest(context.Background(), ns, ms)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mem(kind models.Kind, content string, at time.Time) *models.Memory {
	return &models.Memory{Kind: kind, Content: content, CreatedAt: at}
}

func TestSearchFindsStoredMemory(t *testing.T) {
	e := newEnv(t)
	e.add(t, "a",
		mem(models.KindFact, "Nadia keeps her bees on the roof of the old cannery.", t0.Add(-time.Hour)),
		mem(models.KindFact, "The harbour ferry leaves at seven every morning.", t0.Add(-time.Hour)),
		mem(models.KindFact, "Omar is allergic to peanuts and shellfish.", t0.Add(-time.Hour)),
	)
	resp, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: models.ModeSearch, Query: "where are the bees kept?", ConversationID: "c1", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Content, "cannery") {
		t.Fatalf("top result = %+v, want the cannery memory", resp.Results)
	}
	r := resp.Results[0]
	if r.SurfacingID == "" || r.Components == nil || r.Components.Relevance <= 0 {
		t.Fatalf("result lacks surfacing id or components: %+v", r)
	}
	if !strings.Contains(resp.Context, "cannery") || !strings.HasPrefix(resp.Context, "Relevant memories:") {
		t.Fatalf("context block = %q", resp.Context)
	}
	for _, st := range []string{"intake", "search", "graph", "rank", "record"} {
		if _, ok := resp.Stages[st]; !ok {
			t.Errorf("stage %q missing from %v", st, resp.Stages)
		}
	}
	// The surfacing is recorded and the memory's counters moved.
	s, err := e.store.GetSurfacing(context.Background(), "a", r.SurfacingID)
	if err != nil || s.MemoryID != r.Memory.ID || s.Mode != models.ModeSearch || s.Rank != 1 {
		t.Fatalf("surfacing = %+v, %v", s, err)
	}
	m, err := e.store.GetMemory(context.Background(), "a", r.Memory.ID)
	if err != nil || m.SurfaceCount != 1 || !m.LastSurfaced.Equal(t0) {
		t.Fatalf("memory after surfacing = %+v, %v", m, err)
	}
}

func TestNothingRelevantIsEmpty(t *testing.T) {
	e := newEnv(t)
	e.add(t, "a", mem(models.KindFact, "Nadia keeps her bees on the roof of the old cannery.", t0))
	resp, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: models.ModeAmbient, Query: "quarterly tax filing deadline"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 0 || resp.Context != "" {
		t.Fatalf("got %d results, context %q; want none", len(resp.Results), resp.Context)
	}
}

func TestNamespacesAreIsolated(t *testing.T) {
	e := newEnv(t)
	e.add(t, "a", mem(models.KindFact, "Nadia keeps her bees on the roof.", t0))
	resp, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "b", Mode: models.ModeSearch, Query: "bees roof"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 0 {
		t.Fatalf("namespace b sees %d results of a", len(resp.Results))
	}
}

func TestStartupRunsNoSearch(t *testing.T) {
	e := newEnv(t)
	var ms []*models.Memory
	for i := 0; i < 5; i++ {
		ms = append(ms, mem(models.KindCrystal, fmt.Sprintf("crystal %d", i), t0.Add(time.Duration(i)*time.Minute)))
		ms = append(ms, mem(models.KindAnchor, fmt.Sprintf("anchor %d", i), t0.Add(time.Duration(i)*time.Minute)))
	}
	for i := 0; i < 3; i++ {
		ms = append(ms, mem(models.KindSummary, fmt.Sprintf("summary %d", i), t0.Add(time.Duration(10+i)*time.Minute)))
	}
	for i := 0; i < 6; i++ { // turns 0..2 before the newest summary (minute 12), 3..5 after
		ms = append(ms, mem(models.KindTurn, fmt.Sprintf("turn %d", i), t0.Add(time.Duration(9+i)*time.Minute+30*time.Second)))
	}
	e.add(t, "a", ms...)
	e.store.searches.Store(0)
	resp, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: models.ModeStartup, Now: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if n := e.store.searches.Load(); n != 0 {
		t.Fatalf("startup ran %d searches, want 0", n)
	}
	var got []string
	for _, r := range resp.Results {
		got = append(got, r.Content)
	}
	want := []string{"anchor 4", "anchor 3", "crystal 4", "crystal 3", "crystal 2", "summary 2", "summary 1", "turn 3", "turn 4", "turn 5"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("startup = %q\nwant      %q", got, want)
	}
	if resp.Startup == nil || resp.Startup.Memories != len(ms) {
		t.Fatalf("startup info = %+v, want %d memories", resp.Startup, len(ms))
	}
}

// TestLongMemoryFoundAsFragment is acceptance 5 of the core issue: a 4,400-character memory
// whose middle mentions "high-trust bot pairs" is found by that phrase as a fragment.
func TestLongMemoryFoundAsFragment(t *testing.T) {
	e := newEnv(t)
	filler := []string{
		"The operators reviewed the weekly logs and noted steady traffic across the regions.",
		"Several maintenance windows were scheduled for the storage layer during quiet hours.",
		"A new dashboard summarized latency percentiles for every public endpoint in the fleet.",
		"Teams discussed the migration plan for the legacy billing system and its cron tasks.",
	}
	var b strings.Builder
	for i := 0; b.Len() < 2100; i++ {
		b.WriteString(filler[i%len(filler)] + " ")
	}
	b.WriteString("The key finding was that high-trust bot pairs exchange memories far more often than strangers do. ")
	for i := 0; b.Len() < 4400; i++ {
		b.WriteString(filler[(i+2)%len(filler)] + " ")
	}
	long := b.String()[:4400]
	created := e.add(t, "a", mem(models.KindDocument, long, t0),
		mem(models.KindFact, "Bots often pair up with other bots they trust.", t0))
	parent := created[0]
	if parent.ChunkCount < 8 {
		t.Fatalf("chunk count = %d, want ≥ 8 for 4,400 characters", parent.ChunkCount)
	}
	resp, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: models.ModeSearch, Query: "high-trust bot pairs", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	// The distractor shares three of the four words, closer together in a shorter text, so
	// it may rank first; the fragment must be found, and as a full phrase match.
	var top *recall.Result
	for i := range resp.Results {
		if resp.Results[i].Fragment != nil {
			top = &resp.Results[i]
			break
		}
	}
	if top == nil || top.Components.Phrase != 1 {
		t.Fatalf("no fragment with a full phrase match among %+v", resp.Results)
	}
	if top.Fragment.ParentID != parent.ID || top.Memory.ID != parent.ID || !strings.Contains(top.Content, "high-trust bot pairs") {
		t.Fatalf("fragment = %+v content %q", top.Fragment, top.Content)
	}
	if top.Fragment.Count != parent.ChunkCount || top.Fragment.Index < 2 || top.Fragment.Index > top.Fragment.Count-1 {
		t.Fatalf("fragment %d/%d, want a middle one of %d", top.Fragment.Index, top.Fragment.Count, parent.ChunkCount)
	}
	if !strings.Contains(resp.Context, fmt.Sprintf("[Fragment %d/%d of %s]", top.Fragment.Index, top.Fragment.Count, parent.ID)) {
		t.Fatalf("context block lacks the fragment marker: %q", resp.Context)
	}
	// Hydration: the parent holds the whole text.
	got, err := e.store.GetMemory(context.Background(), "a", parent.ID)
	if err != nil || got.Content != long {
		t.Fatalf("parent content has %d bytes, want %d (%v)", len(got.Content), len(long), err)
	}
	// Record how much chunking helps the vector side: the query against the chunk that
	// holds the phrase vs against the whole text.
	vs, err := e.emb.Embed(context.Background(), []string{"high-trust bot pairs", top.Content, long})
	if err != nil {
		t.Fatal(err)
	}
	chunked, whole := dot(vs[0], vs[1]), dot(vs[0], vs[2])
	t.Logf("cosine(query, chunk) = %.3f, cosine(query, whole text) = %.3f", chunked, whole)
	if chunked <= whole {
		t.Fatalf("chunk similarity %.3f not above whole-text similarity %.3f", chunked, whole)
	}
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// Ambient recall never volunteers a sensitive memory, nor one it surfaced in the last turns.
// The p_use gate is off (policy "off"), so only those two rules can hide a memory: with the
// sensitive one left out, the other is its turn's lone match — BM25 1, and with no runner-up
// it leads by its whole match 0.874 — and a fresh namespace's prior gives it σ(4.139) ≈
// 0.984: the curve at match 0.874, −4.626, plus coverage 1.5·0.930, BM25 3·1 and the lead
// 5·0.874.
func TestAmbientSkipsRecentlySurfacedAndSensitive(t *testing.T) {
	e := newEnv(t)
	secret := mem(models.KindFact, "Omar's bank password hint is the name of his first dog Biscuit.", t0)
	secret.Sensitive = true
	e.add(t, "a", mem(models.KindFact, "Omar's dog Biscuit loves the beach.", t0), secret)
	req := func() *recall.Request {
		return &recall.Request{Namespace: "a", Mode: models.ModeAmbient, ConversationID: "c", Query: "Biscuit the dog",
			ThresholdPolicy: predict.PolicyOff, Explain: true}
	}
	r1, err := e.p.Recall(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.Results) != 1 || !strings.Contains(r1.Results[0].Content, "beach") {
		t.Fatalf("ambient results = %+v, want only the non-sensitive one", r1.Results)
	}
	if c := r1.Results[0].Components; c == nil || c.BM25 != 1 || c.Top != 1 || c.Margin != c.Match || math.Abs(r1.Results[0].PUse-0.9843045447523269) > 1e-9 {
		t.Errorf("the lone match: p_use %v, components %+v; want σ(4.139) ≈ 0.984 from BM25 1 and its whole match as margin", r1.Results[0].PUse, c)
	}
	r2, err := e.p.Recall(context.Background(), req())
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.Results) != 0 {
		t.Fatalf("second ambient turn repeated %d memories", len(r2.Results))
	}
	// Search mode is asked for explicitly: sensitive memories may be returned.
	r3, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: models.ModeSearch, Query: "Biscuit password hint"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r3.Results) == 0 || !r3.Results[0].Memory.Sensitive {
		t.Fatalf("search results = %+v, want the sensitive memory first", r3.Results)
	}
}

func TestInvalidFactsAndFilters(t *testing.T) {
	e := newEnv(t)
	old := mem(models.KindFact, "Lena lives in Lisbon.", t0.Add(-100*24*time.Hour))
	old.InvalidAt = t0.Add(-10 * 24 * time.Hour)
	e.add(t, "a", old, mem(models.KindFact, "Lena lives in Porto now.", t0.Add(-10*24*time.Hour)),
		mem(models.KindTurn, "Lena: I love living in Porto!", t0.Add(-9*24*time.Hour)))
	ask := func(r *recall.Request) []string {
		t.Helper()
		r.Namespace, r.Mode = "a", models.ModeSearch
		resp, err := e.p.Recall(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range resp.Results {
			out = append(out, x.Content)
		}
		return out
	}
	if got := ask(&recall.Request{Query: "where does Lena live"}); contains(got, "Lisbon") {
		t.Fatalf("invalid fact returned: %q", got)
	}
	if got := ask(&recall.Request{Query: "where does Lena live", IncludeInvalid: true}); !contains(got, "Lisbon") {
		t.Fatalf("include_invalid did not return history: %q", got)
	}
	if got := ask(&recall.Request{Query: "Lena Porto", Kinds: []models.Kind{models.KindTurn}}); len(got) != 1 || !strings.HasPrefix(got[0], "Lena:") {
		t.Fatalf("kinds filter: %q", got)
	}
}

func contains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestTokenBudgetAndLimit(t *testing.T) {
	e := newEnv(t)
	var ms []*models.Memory
	for i := 0; i < 20; i++ {
		ms = append(ms, mem(models.KindFact, fmt.Sprintf("Garden note %d: tomatoes need water every morning in summer heat.", i), t0))
	}
	e.add(t, "a", ms...)
	resp, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: models.ModeSearch, Query: "tomatoes water", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 5 {
		t.Fatalf("limit 5 gave %d", len(resp.Results))
	}
	resp, err = e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: models.ModeSearch, Query: "tomatoes water", TokenBudget: 40})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) == 0 || len(resp.Results) > 3 {
		t.Fatalf("token budget 40 gave %d results of ~15 tokens", len(resp.Results))
	}
	for i := 1; i < len(resp.Results); i++ {
		if resp.Results[i].Score > resp.Results[i-1].Score+1e-12 {
			t.Fatalf("results not in score order at %d", i)
		}
	}
}

func TestBadRequests(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		req   recall.Request
		field string
	}{
		{recall.Request{Namespace: "bad ns", Query: "x"}, "namespace"},
		{recall.Request{Namespace: "a", Mode: "psychic", Query: "x"}, "mode"},
		{recall.Request{Namespace: "a"}, "query"},
		{recall.Request{Namespace: "a", Query: "x", Limit: 101}, "limit"},
		{recall.Request{Namespace: "a", Query: "x", Limit: -1}, "limit"},
		{recall.Request{Namespace: "a", Query: "x", TokenBudget: -5}, "token_budget"},
		{recall.Request{Namespace: "a", Query: "x", Rerank: "maybe"}, "rerank"},
		{recall.Request{Namespace: "a", Query: "x", Kinds: []models.Kind{"turn", "nope"}}, "kinds[1]"},
		{recall.Request{Namespace: "a", Query: "x", Since: t0, Until: t0.Add(-time.Hour)}, "until"},
	} {
		_, err := e.p.Recall(context.Background(), &tc.req)
		if models.ErrorCode(err) != models.EINVALID || models.ErrorField(err) != tc.field {
			t.Errorf("%+v: err = %v, want invalid on %s", tc.req, err, tc.field)
		}
	}
}

func TestFreshnessIsAHalfLife(t *testing.T) {
	e := newEnv(t)
	e.add(t, "a", mem(models.KindFact, "Ravi planted an olive tree.", t0.Add(-14*24*time.Hour)),
		mem(models.KindFact, "Ravi planted a fig tree.", t0.Add(-28*24*time.Hour)))
	resp, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: models.ModeSearch, Query: "Ravi planted tree", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range resp.Results {
		got[r.Content] = r.Components.Freshness
	}
	if f := got["Ravi planted an olive tree."]; math.Abs(f-0.5) > 1e-9 {
		t.Errorf("freshness at 14 days = %v, want 0.5", f)
	}
	if f := got["Ravi planted a fig tree."]; math.Abs(f-0.25) > 1e-9 {
		t.Errorf("freshness at 28 days = %v, want 0.25", f)
	}
}

func TestResurfacingJoinsAmbientUnlessInCooldown(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	m := mem(models.KindFact, "Ravi's pottery class starts in spring.", t0.Add(-30*24*time.Hour))
	m.Triggers = []string{"ceramics", "kiln", "glaze"}
	created := e.add(t, "a", m)
	id := created[0].ID
	if err := e.store.Enqueue(ctx, []*models.ResurfaceItem{{Namespace: "a", MemoryID: id, DueAt: t0, Score: 1, QueuedAt: t0}}); err != nil {
		t.Fatal(err)
	}
	setMeta := func(fn func(m *models.Memory)) {
		t.Helper()
		err := e.store.Update(ctx, func(tx models.Tx) error {
			m, err := tx.GetMemory("a", id)
			if err != nil {
				return err
			}
			fn(m)
			return tx.PutMemory(m)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setMeta(func(m *models.Memory) { m.Confidence = 0.9 }) // sure enough to volunteer (0.9 ≥ 0.7)
	ask := func(conv string) *recall.Response {
		t.Helper()
		resp, err := e.p.Recall(ctx, &recall.Request{Namespace: "a", Mode: models.ModeAmbient, ConversationID: conv,
			Query: "I bought a kiln and some glaze for my ceramics hobby", ConversationType: models.ConvOther})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := ask("c1")
	if len(resp.Results) != 1 || resp.Results[0].Memory.ID != id || !contains(resp.Results[0].Reasons, "resurface") {
		t.Fatalf("ambient results = %+v, want the queued memory, resurfaced", resp.Results)
	}
	s, err := e.store.GetSurfacing(ctx, "a", resp.Results[0].SurfacingID)
	if err != nil || s.Mode != models.ModeResurface {
		t.Fatalf("surfacing mode = %v, %v; want resurface", s, err)
	}
	setMeta(func(m *models.Memory) { m.Schedule.CooldownTo = t0.Add(7 * 24 * time.Hour) }) // dismissed meanwhile
	if resp := ask("c2"); len(resp.Results) != 0 {
		t.Fatalf("a memory in its dismissal cooldown came back: %+v", resp.Results)
	}
}

// TestTokenBudgetCountsTheWholeBlock: token_budget bounds the context block a bot pastes,
// each line's "- [kind, date, …]" prefix and the header included, not the contents alone.
func TestTokenBudgetCountsTheWholeBlock(t *testing.T) {
	e := newEnv(t)
	var ms []*models.Memory
	for i := 0; i < 20; i++ {
		m := mem(models.KindFact, fmt.Sprintf("Garden note %d: tomatoes need water every morning in summer heat.", i), t0)
		m.Source.Speaker = "Grandmother Wilhelmina"
		ms = append(ms, m)
	}
	e.add(t, "a", ms...)
	for _, budget := range []int{20, 40, 75, 200} {
		resp, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: models.ModeSearch, Query: "tomatoes water", TokenBudget: budget})
		if err != nil {
			t.Fatal(err)
		}
		if n := nlp.EstimateTokens(resp.Context); n > budget {
			t.Errorf("budget %d: the block is %d tokens (%d results)", budget, n, len(resp.Results))
		}
		if budget >= 40 && len(resp.Results) == 0 {
			t.Errorf("budget %d: no result fits, want at least one line of ~27 tokens", budget)
		}
	}
}

// startupWorld is a namespace with one anchor, one crystal, a summary of conversation c1 at
// minute 10, turns of c1 at minute 5 and 11–20, and turns of c2 half a minute after
// minute 5 and 11–15.
func startupWorld(t *testing.T, e *env) {
	t.Helper()
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	turn := func(conv string, min int) *models.Memory {
		m := mem(models.KindTurn, fmt.Sprintf("%s turn at minute %d", conv, min), at(min))
		if conv == "c2" {
			m.CreatedAt = m.CreatedAt.Add(30 * time.Second) // no two turns at the same time
		}
		m.Source.ConversationID = conv
		return m
	}
	summary := mem(models.KindSummary, "summary of c1 so far", at(10))
	summary.Source.ConversationID = "c1"
	ms := []*models.Memory{mem(models.KindAnchor, "anchor", at(0)), mem(models.KindCrystal, "crystal", at(1)), summary,
		turn("c1", 5), turn("c2", 5)}
	for min := 11; min <= 20; min++ {
		ms = append(ms, turn("c1", min))
	}
	for min := 11; min <= 15; min++ {
		ms = append(ms, turn("c2", min))
	}
	e.add(t, "a", ms...)
}

func startupContents(t *testing.T, e *env, req *recall.Request) ([]string, *recall.Response) {
	t.Helper()
	req.Namespace, req.Mode, req.Now = "a", models.ModeStartup, t0.Add(time.Hour)
	resp, err := e.p.Recall(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range resp.Results {
		got = append(got, r.Content)
	}
	return got, resp
}

// TestStartupObeysLimitAndBudget is issue 8, item 3: limit 1 returned every turn of every
// conversation. The package obeys limit and token_budget, keeping the newest turns, and with
// a conversation id shows that conversation's turns.
func TestStartupObeysLimitAndBudget(t *testing.T) {
	e := newEnv(t)
	startupWorld(t, e)
	turns := func(conv string, mins ...int) []string {
		var out []string
		for _, m := range mins {
			out = append(out, fmt.Sprintf("%s turn at minute %d", conv, m))
		}
		return out
	}
	distilled := []string{"anchor", "crystal", "summary of c1 so far"}
	for _, c := range []struct {
		name string
		req  recall.Request
		want []string
	}{
		{"limit 1", recall.Request{Limit: 1}, []string{"anchor"}},
		{"limit 5 in c1 keeps the newest two turns", recall.Request{ConversationID: "c1", Limit: 5},
			append(distilled, turns("c1", 19, 20)...)},
		{"c1, no limit: its turns after its summary", recall.Request{ConversationID: "c1"},
			append(distilled, turns("c1", 11, 12, 13, 14, 15, 16, 17, 18, 19, 20)...)},
		{"c2: c1's summary covers none of its turns", recall.Request{ConversationID: "c2", Limit: 6},
			append(distilled, turns("c2", 13, 14, 15)...)},
		{"c2, no limit", recall.Request{ConversationID: "c2"},
			append(distilled, turns("c2", 5, 11, 12, 13, 14, 15)...)},
		{"no conversation: every turn after the newest summary", recall.Request{Limit: 10},
			append(distilled, "c1 turn at minute 15", "c2 turn at minute 15", "c1 turn at minute 16", "c1 turn at minute 17",
				"c1 turn at minute 18", "c1 turn at minute 19", "c1 turn at minute 20")},
	} {
		got, _ := startupContents(t, e, &c.req)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// A token budget counts the whole block and keeps the newest turns, without gaps.
	for _, budget := range []int{10, 30, 60, 100} {
		got, resp := startupContents(t, e, &recall.Request{ConversationID: "c1", TokenBudget: budget})
		if n := nlp.EstimateTokens(resp.Context); n > budget {
			t.Errorf("budget %d: the block is %d tokens", budget, n)
		}
		var shown []string
		for _, s := range got {
			if strings.HasPrefix(s, "c1 turn") {
				shown = append(shown, s)
			}
		}
		all := turns("c1", 11, 12, 13, 14, 15, 16, 17, 18, 19, 20)
		if want := all[len(all)-len(shown):]; strings.Join(shown, "|") != strings.Join(want, "|") {
			t.Errorf("budget %d: turns %q, want the newest %d in order", budget, shown, len(shown))
		}
		if budget >= 100 && len(shown) == 0 {
			t.Errorf("budget %d: no turn fits", budget)
		}
	}
}

// TestStartupBriefsImportantFacts is issue 41, failure 5: the startup package held no facts,
// so an agent that stored facts was briefed "No relevant memories.". It now lists the valid
// facts and insights, the most important first, after the anchors and before the turns,
// and never one that stopped being true or is sensitive, within the request's limit.
func TestStartupBriefsImportantFacts(t *testing.T) {
	e := newEnv(t)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	fact := func(kind models.Kind, content string, importance float64, min int) *models.Memory {
		m := mem(kind, content, at(min))
		m.Importance = importance
		return m
	}
	moved := fact(models.KindFact, "Nadia lives in Porto.", 0.95, 2)
	moved.InvalidAt = at(30) // superseded before the briefing, though the most important
	secret := fact(models.KindFact, "Nadia's bank PIN is private.", 1, 3)
	secret.Sensitive = true
	turn := mem(models.KindTurn, "see you tomorrow", at(50))
	e.add(t, "a", mem(models.KindAnchor, "anchor", at(0)), moved, secret,
		fact(models.KindFact, "Nadia's daughter is named Ines.", 0.9, 1),
		fact(models.KindFact, "Nadia lives in Lisbon.", 0.7, 31),
		fact(models.KindInsight, "Nadia opens up when asked about her bees.", 0.6, 20),
		fact(models.KindFact, "Nadia likes green tea.", 0.2, 40), turn)
	facts := []string{"Nadia's daughter is named Ines.", "Nadia lives in Lisbon.", "Nadia opens up when asked about her bees.", "Nadia likes green tea."}
	for _, c := range []struct {
		name string
		req  recall.Request
		want []string
	}{
		{"no limit: anchor, facts by importance, the turn", recall.Request{}, append(append([]string{"anchor"}, facts...), "see you tomorrow")},
		{"limit 3: the most important first", recall.Request{Limit: 3}, []string{"anchor", facts[0], facts[1]}},
	} {
		got, resp := startupContents(t, e, &c.req)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		if strings.Contains(resp.Context, "Porto") || strings.Contains(resp.Context, "PIN") {
			t.Errorf("%s: the briefing shows a superseded or sensitive fact:\n%s", c.name, resp.Context)
		}
	}
}

// fixedRun is a maintenance.Run at a fixed time, with checkpoints in memory.
type fixedRun struct {
	now   time.Time
	state map[string]string
}

func (r *fixedRun) Now() time.Time                        { return r.now }
func (r *fixedRun) Checkpoint(key string) (string, error) { return r.state[key], nil }
func (r *fixedRun) SetCheckpoint(key, value string) error { r.state[key] = value; return nil }

// TestStartupIsNotImplicitlyIgnored is issue 8, item 4: a bot that loaded its startup
// package five times saw its own turns' confidence fall from 0.5 to 0.40, as every load was
// a surfacing the implicit-ignore job later counted as ignored.
func TestStartupIsNotImplicitlyIgnored(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	startupWorld(t, e)
	var shown, tracked []string
	for i := 0; i < 5; i++ {
		_, resp := startupContents(t, e, &recall.Request{ConversationID: "c1", Limit: 5})
		shown = shown[:0]
		for _, r := range resp.Results {
			shown = append(shown, r.Memory.ID)
			if r.SurfacingID != "" {
				tracked = append(tracked, r.SurfacingID)
			}
		}
	}
	run := &fixedRun{now: t0.Add(3 * time.Hour), state: map[string]string{}}
	if n, err := maintenance.New(e.store.Store, maintenance.Options{}).ImplicitIgnore(ctx, run); err != nil || n != 0 {
		t.Errorf("implicit-ignore wrote %d events (%v), want 0", n, err)
	}
	ms, err := e.store.GetMemories(ctx, "a", shown)
	if err != nil || len(ms) == 0 || len(ms) != len(shown) {
		t.Fatalf("memories = %d, %v", len(ms), err)
	}
	for _, m := range ms {
		if m.Confidence != 0.5 || m.RecentDismissals != 0 || m.SurfaceCount != 0 {
			t.Errorf("%q after five startups: confidence %v, recent dismissals %v, surface count %d; want 0.5, 0, 0",
				m.Content, m.Confidence, m.RecentDismissals, m.SurfaceCount)
		}
	}
	if len(tracked) > 0 {
		t.Errorf("startup results carry %d surfacing ids, want none", len(tracked))
	}
	// The conversation's state still moved: ambient recall does not repeat what the
	// package showed.
	st, err := e.store.GetConversation(ctx, "a", "c1")
	if err != nil || len(st.RecentSurfaced) != 5 || len(st.RecentSurfaced[4]) != 5 {
		t.Fatalf("conversation state = %+v, %v; want five turns of five memories", st, err)
	}
}

// TestResultsAreCallersCopies: ranking reads the store's shared views of its candidates,
// but each result is the caller's own copy, embedding included, as GetMemories returns it.
func TestResultsAreCallersCopies(t *testing.T) {
	e := newEnv(t)
	e.add(t, "a",
		&models.Memory{Kind: models.KindFact, Content: "Nadia keeps her bees on the roof of the old cannery.", CreatedAt: t0.Add(-time.Hour), Domains: []string{"bees"}},
		mem(models.KindFact, "The harbour ferry leaves at seven every morning.", t0.Add(-time.Hour)),
	)
	for _, mode := range []models.Mode{models.ModeSearch, models.ModeAmbient} {
		ask := func() recall.Result {
			t.Helper()
			resp, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: mode, Query: "where are the bees kept?", ThresholdPolicy: "off"})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Content, "cannery") {
				t.Fatalf("%s: results %+v, want the cannery memory first", mode, resp.Results)
			}
			return resp.Results[0]
		}
		r := ask()
		stored, err := e.store.GetMemory(context.Background(), "a", r.Memory.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Memory.Embedding) == 0 || !slices.Equal(r.Memory.Embedding, stored.Embedding) || r.Memory.Content != stored.Content {
			t.Fatalf("%s: result memory %+v, want the stored one %+v", mode, r.Memory, stored)
		}
		r.Memory.Content, r.Memory.Domains[0], r.Memory.Embedding[0] = "changed", "changed", 42
		again := ask()
		if again.Memory.Content != stored.Content || again.Memory.Domains[0] != "bees" || again.Memory.Embedding[0] != stored.Embedding[0] {
			t.Fatalf("%s: changing a result changed the store: %+v", mode, again.Memory)
		}
	}
}

// Ambient recall leaves out a memory that is one of the request's own messages (white space
// and case aside): the bot has it in front of it. Search does not: it was asked for.
func TestAmbientLeavesOutTheRequestsOwnMessages(t *testing.T) {
	e := newEnv(t)
	said := "The ferry to the island leaves at nine."
	e.add(t, "a", mem(models.KindTurn, said, t0), mem(models.KindFact, "The island ferry takes bicycles for free.", t0))
	for _, c := range []struct {
		mode     models.Mode
		wantSaid bool
	}{{models.ModeAmbient, false}, {models.ModeSearch, true}} {
		r, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", Mode: c.mode, ConversationID: "c-" + string(c.mode),
			ThresholdPolicy: predict.PolicyOff, Messages: []recall.Message{{Content: "  the FERRY to the island leaves at nine. "},
				{Content: "When does the island ferry leave?"}}})
		if err != nil {
			t.Fatal(err)
		}
		gotSaid, gotOther := false, false
		for _, res := range r.Results {
			gotSaid = gotSaid || res.Content == said
			gotOther = gotOther || strings.Contains(res.Content, "bicycles")
		}
		if gotSaid != c.wantSaid || !gotOther {
			t.Errorf("%s: the message itself returned %v (want %v), the other memory %v (want true): %+v", c.mode, gotSaid, c.wantSaid, gotOther, r.Results)
		}
	}
}
