// Package storetest is the conformance suite every models.Store must pass (docs/design.md#store-contract).
// Each method has its own subtest with the working case, the missing case and bad input;
// data is written out of order to prove sorting, and every read is checked for namespace
// isolation.
//
// Where models.Store leaves a detail open, the suite pins what the stores agreed on:
//   - k < 1 for searches, negative limits and offsets are EINVALID; a ScanEdges limit < 1 too;
//   - a concept written again gains max(Mentions, 1) mentions, keeps FirstSeen and Kind,
//     adds new aliases, and LastSeen only moves forward;
//   - GetConcepts normalizes the names it is given;
//   - FindSurfacings and FindEvents order by At, then id; Queue by score, then memory id;
//     FindJobRuns by Start, then id, newest first;
//   - GraphStats counts memories (not chunks) plus concepts as nodes;
//   - Tx.PutMemory writes only the retrieval metadata and the schedule; Tx.EditMemory only
//     importance, validity and sensitivity, to the memory and its chunks.
package storetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// Run runs the suite. open must return a new, empty store whose searches already work (the
// SQLite store calls Rebuild inside it) and register its Close with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) models.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open func(t *testing.T) models.Store)
	}{
		{"CreateMemories", testCreateMemories},
		{"Concepts", testConcepts},
		{"GetMemory", testGetMemory},
		{"GetMemories", testGetMemories},
		{"ViewMemories", testViewMemories},
		{"FindMemories", testFindMemories},
		{"DeleteMemory", testDeleteMemory},
		{"LastInConversation", testLastInConversation},
		{"SearchText", testSearchText},
		{"FillerNeverDecides", testFillerNeverDecides},
		{"SearchVector", testSearchVector},
		{"TenantScores", testTenantScores},
		{"ReadTurn", testReadTurn},
		{"Neighbors", testNeighbors},
		{"StrongestNeighbors", testStrongestNeighbors},
		{"StrongestTies", testStrongestTies},
		{"ScanEdges", testScanEdges},
		{"GraphStats", testGraphStats},
		{"GraphVersion", testGraphVersion},
		{"Namespaces", testNamespaces},
		{"Surfacings", testSurfacings},
		{"Update", testUpdate},
		{"UpdateSerializable", testUpdateSerializable},
		{"EditMemory", testEditMemory},
		{"FindEvents", testFindEvents},
		{"Queue", testQueue},
		{"Leases", testLeases},
		{"JobRuns", testJobRuns},
		{"State", testState},
		{"Decisions", testDecisions},
		{"Experiments", testExperiments},
		{"EpochTimes", testEpochTimes},
		{"PruneHistory", testPruneHistory},
		{"PruneHistoryPerNamespace", testPruneHistoryPerNamespace},
		{"DeleteNamespace", testDeleteNamespace},
		{"Embedders", testEmbedders},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

// Namespaces used by the suite; "other" holds look-alike data that must never leak.
const (
	ns    = "suite"
	other = "suite-other"
)

// t0 is the suite's epoch; every time is an offset from it.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func at(minutes int) time.Time { return t0.Add(time.Duration(minutes) * time.Minute) }

var ctx = context.Background()

// mem returns a plain turn memory.
func mem(namespace, id, content string, created time.Time) *models.Memory {
	return &models.Memory{
		ID: id, Namespace: namespace, Kind: models.KindTurn, Content: content, CreatedAt: created,
		Importance: 0.5, Confidence: models.DefaultConfidence,
	}
}

// fullMemory sets every field a store must keep.
func fullMemory(namespace, id string) *models.Memory {
	return &models.Memory{
		ID: id, Namespace: namespace, Kind: models.KindFact, Content: "Caroline moved to Berlin in May.",
		CreatedAt: at(1).Add(123456789), ValidAt: at(-60), InvalidAt: at(600),
		Source:     models.Source{ConversationID: "conv-1", MessageID: "msg-7", Speaker: "Caroline", Role: models.RoleUser},
		Importance: 0.75, Domains: []string{"life", "travel"}, Triggers: []string{"berlin", "moving"},
		Concepts: []string{"caroline", "berlin"}, Triple: &models.Triple{Subject: "Caroline", Predicate: "moved to", Object: "Berlin"},
		Sensitive: true, Confidence: 0.6, UsageCount: 3, LastUsed: at(5), SurfaceCount: 4, LastSurfaced: at(6),
		RecentDismissals: 1.5, IrrelevantContexts: [][]string{{"work", "taxes"}, {"cooking"}},
		Schedule:  models.Schedule{Stability: 2.5, Difficulty: 5.1, LastReview: at(5), Due: at(5000), Reps: 2, Lapses: 1, CooldownTo: at(90)},
		Embedding: []float32{0.6, 0.8, 0, 0},
	}
}

func write(m *models.Memory, chunks ...*models.Memory) *models.MemoryWrite {
	if len(chunks) > 0 {
		m.ChunkCount = len(chunks)
	}
	for i, c := range chunks {
		c.ParentID, c.ChunkIndex = m.ID, i
	}
	return &models.MemoryWrite{Memory: m, Chunks: chunks}
}

func mustCreate(t *testing.T, s models.Store, ws ...*models.MemoryWrite) {
	t.Helper()
	if err := s.CreateMemories(ctx, ws); err != nil {
		t.Fatalf("CreateMemories: %v", err)
	}
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

// wantCode fails unless err carries the models error code want.
func wantCode(t *testing.T, err error, want string) {
	t.Helper()
	if got := models.ErrorCode(err); got != want {
		t.Fatalf("error code = %q (%v), want %q", got, err, want)
	}
}

// normalize returns a copy of v with every time.Time in UTC (dropping monotonic readings)
// and empty slices as nil, so reflect.DeepEqual compares meaning, not representation.
func normalize(v any) any {
	rv := reflect.ValueOf(v)
	out := reflect.New(rv.Type()).Elem()
	normValue(out, rv)
	return out.Interface()
}

var timeType = reflect.TypeFor[time.Time]()

func normValue(dst, src reflect.Value) {
	switch {
	case src.Type() == timeType:
		tm := src.Interface().(time.Time)
		if tm.IsZero() {
			dst.Set(reflect.Zero(timeType))
		} else {
			dst.Set(reflect.ValueOf(tm.UTC().Round(0)))
		}
	case src.Kind() == reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(src.Type().Elem())
		normValue(p.Elem(), src.Elem())
		dst.Set(p)
	case src.Kind() == reflect.Struct:
		for i := range src.NumField() {
			if dst.Field(i).CanSet() {
				normValue(dst.Field(i), src.Field(i))
			}
		}
	case src.Kind() == reflect.Slice:
		if src.Len() == 0 {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			normValue(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	default:
		dst.Set(src)
	}
}

// assertEqual compares got and want after normalize.
func assertEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := normalize(got), normalize(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, deref(g), deref(w))
	}
}

func deref(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return rv.Elem().Interface()
	}
	if rv.Kind() == reflect.Slice {
		var parts []any
		for i := range rv.Len() {
			parts = append(parts, deref(rv.Index(i).Interface()))
		}
		return parts
	}
	return v
}

func memIDs(ms []*models.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func hitIDs(hs []models.Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ID
	}
	return out
}

func assertIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

func edgeKeys(es []*models.Edge) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%s-%s->%s", e.From, e.Type, e.To)
	}
	return out
}
