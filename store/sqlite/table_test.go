package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/store/memindex"
)

// The tests of this file prove the column lists without trusting any position: every field
// of every stored type gets a value no other field has (fill, by reflection, so a field
// added to a models type is filled too), goes through the store's own writes and comes back
// through its own reads equal to what was written. A column bound at another's place, a
// field with no column, or a column scanned into the wrong field fails them.

// filler gives each leaf field the next value of a sequence.
type filler struct{ n int }

var fillBase = time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)

func (f *filler) next() int { f.n++; return f.n }

// fill sets every field of *p to a distinct non-zero value.
func (f *filler) fill(t *testing.T, p any) {
	t.Helper()
	f.value(t, reflect.ValueOf(p).Elem(), reflect.TypeOf(p).Elem().Name())
}

func (f *filler) value(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	if v.Type() == reflect.TypeFor[time.Time]() {
		n := f.next()
		// Whole hours plus nanoseconds: the codec keeps nanoseconds.
		v.Set(reflect.ValueOf(fillBase.Add(time.Duration(n)*time.Hour + time.Duration(n))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("v%d", f.next()))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(f.next()))
	case reflect.Float64:
		v.SetFloat(float64(f.next()) / 128) // exact in binary, and ≤ 1 for the first 128
	case reflect.Float32:
		v.SetFloat(float64(f.next()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Struct:
		for i := range v.NumField() {
			f.value(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.value(t, v.Elem(), path)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			f.value(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		t.Fatalf("fill: %s is a %s; teach fill (and the column kinds) about it", path, v.Kind())
	}
}

// zeroFields lists the leaf fields of v that hold their zero value.
func zeroFields(v reflect.Value, path string) []string {
	if v.Type() == reflect.TypeFor[time.Time]() || v.Kind() != reflect.Struct {
		if v.IsZero() {
			return []string{path}
		}
		return nil
	}
	var out []string
	for i := range v.NumField() {
		out = append(out, zeroFields(v.Field(i), path+"."+v.Type().Field(i).Name)...)
	}
	return out
}

// requireFull fails unless every leaf field of *p is set, but those named in except.
func requireFull(t *testing.T, p any, except ...string) {
	t.Helper()
	v := reflect.ValueOf(p).Elem()
	for _, f := range zeroFields(v, v.Type().Name()) {
		if !slices.Contains(except, f) {
			t.Fatalf("%s is zero: the round trip would not show whether it is stored", f)
		}
	}
}

func requireEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s round trip:\n got %+v\nwant %+v", what, got, want)
	}
}

// fullMemory returns a memory with a chunk, every field of each set to a distinct value but
// the ones the other shows: a memory has no parent, a chunk no chunks.
func fullMemory(t *testing.T, f *filler) (*models.Memory, *models.Memory) {
	var m, c models.Memory
	f.fill(t, &m)
	f.fill(t, &c)
	for _, x := range []*models.Memory{&m, &c} {
		x.Namespace, x.Kind = "ns", models.KindFact
		x.Embedding = []float32{0, 1, 0} // unit length: stored as given
	}
	m.ParentID, m.ChunkCount = "", 1
	c.ParentID, c.ChunkCount = m.ID, 0
	requireFull(t, &m, "Memory.ParentID")
	requireFull(t, &c, "Memory.ChunkCount")
	return &m, &c
}

func TestMemoryRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	f := &filler{}
	m, c := fullMemory(t, f)
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: m, Chunks: []*models.Memory{c}}}); err != nil {
		t.Fatal(err)
	}
	// Before Rebuild reads come from SQL (memoryRows.scan).
	for _, want := range []*models.Memory{m, c} {
		got, err := s.GetMemory(ctx, "ns", want.ID)
		if err != nil {
			t.Fatal(err)
		}
		requireEqual(t, "memory via SQL", got, want)
	}
	// The rebuild scans the embedding apart (memoryEmbedding); the cache then answers.
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*models.Memory{m, c} {
		got, err := s.GetMemory(ctx, "ns", want.ID)
		if err != nil {
			t.Fatal(err)
		}
		requireEqual(t, "memory via Rebuild", got, want)
	}

	// Tx.PutMemory writes the metadata columns (updateMemoryMeta) and nothing else.
	var meta models.Memory
	f.fill(t, &meta)
	meta.Namespace, meta.ID = "ns", m.ID
	want := m.Clone()
	memindex.SetMeta(want, &meta)
	if err := s.Update(ctx, func(tx models.Tx) error { return tx.PutMemory(&meta) }); err != nil {
		t.Fatal(err)
	}
	s2 := openAt(t, path) // not rebuilt: reads from SQL
	got, err := s2.GetMemory(ctx, "ns", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	requireEqual(t, "memory after PutMemory", got, want)
	if got.Confidence != meta.Confidence || !got.Schedule.Due.Equal(meta.Schedule.Due) || got.Content != m.Content {
		t.Fatalf("PutMemory: confidence %v, due %v, content %q", got.Confidence, got.Schedule.Due, got.Content)
	}
}

func fullSurfacing(t *testing.T, f *filler) *models.Surfacing {
	var sf models.Surfacing
	f.fill(t, &sf)
	sf.Namespace, sf.Mode, sf.Outcome = "ns", models.ModePredict, models.EventHelpful
	requireFull(t, &sf)
	return &sf
}

func TestSurfacingRoundTrip(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "salience.db"))
	f := &filler{}
	a, b := fullSurfacing(t, f), fullSurfacing(t, f)
	// Two rows in one INSERT: a row bound off by a column would shift the next.
	if err := s.RecordSurfacings(ctx, []*models.Surfacing{a, b}, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*models.Surfacing{a, b} {
		got, err := s.GetSurfacing(ctx, "ns", want.ID)
		if err != nil {
			t.Fatal(err)
		}
		requireEqual(t, "surfacing", got, want)
	}

	// Every column changed, the indexed ones too: PutSurfacing's full update.
	all := fullSurfacing(t, f)
	all.ID = a.ID
	// Only what is not indexed changed: its fast path.
	outcome := fullSurfacing(t, f)
	outcome.ID, outcome.ConversationID, outcome.TurnID, outcome.MemoryID, outcome.At = b.ID, b.ConversationID, b.TurnID, b.MemoryID, b.At
	outcome.Outcome = models.EventDismissed
	for _, want := range []*models.Surfacing{all, outcome} {
		if err := s.Update(ctx, func(tx models.Tx) error { return tx.PutSurfacing(want) }); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetSurfacing(ctx, "ns", want.ID)
		if err != nil {
			t.Fatal(err)
		}
		requireEqual(t, "surfacing after PutSurfacing", got, want)
	}
}

func TestEventRoundTrip(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "salience.db"))
	var e models.Event
	(&filler{}).fill(t, &e)
	e.Namespace, e.Type = "ns", models.EventUsed
	requireFull(t, &e)
	if err := s.Update(ctx, func(tx models.Tx) error { return tx.InsertEvent(&e) }); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindEvents(ctx, models.EventFilter{Namespace: "ns"})
	if err != nil || len(got) != 1 {
		t.Fatalf("FindEvents = %d events, %v", len(got), err)
	}
	requireEqual(t, "event", got[0], &e)
}

func TestConversationRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	var c models.ConversationState
	(&filler{}).fill(t, &c)
	c.Namespace = "ns"
	requireFull(t, &c)
	first := openAt(t, path)
	if err := first.RecordSurfacings(ctx, nil, &c); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil { // applies its journal
		t.Fatal(err)
	}
	got, err := openAt(t, path).GetConversation(ctx, "ns", c.ConversationID) // a new store: no cache
	if err != nil {
		t.Fatal(err)
	}
	requireEqual(t, "conversation", got, &c)
}

func TestEdgeRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "salience.db")
	s := openAt(t, path)
	f := &filler{}
	fullEdge := func() *models.Edge {
		var e models.Edge
		f.fill(t, &e)
		e.Namespace = "ns"
		requireFull(t, &e)
		return &e
	}
	m := &models.Memory{Namespace: "ns", ID: "m1", Kind: models.KindTurn, Content: "x", CreatedAt: fillBase}
	e := fullEdge()
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: m, Edges: []*models.Edge{e}}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ScanEdges(ctx, "ns", models.EdgeKey{}, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("ScanEdges = %d edges, %v", len(got), err)
	}
	requireEqual(t, "edge (insertEdge)", got[0], e)

	// PutEdge on the same key sets every other column (upsertEdge).
	u := fullEdge()
	u.From, u.To, u.Type = e.From, e.To, e.Type
	if err := s.Update(ctx, func(tx models.Tx) error { return tx.PutEdge(u) }); err != nil {
		t.Fatal(err)
	}
	got, err = s.ScanEdges(ctx, "ns", models.EdgeKey{}, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("ScanEdges = %d edges, %v", len(got), err)
	}
	requireEqual(t, "edge (upsertEdge)", got[0], u)

	// The rebuild reads edges through a rawConn; the graph then answers GetEdge.
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	err = s.Update(ctx, func(tx models.Tx) error {
		g, err := tx.GetEdge("ns", u.Key())
		if err == nil {
			requireEqual(t, "edge via Rebuild", g, u)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestConceptRoundTrip(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "salience.db"))
	f := &filler{}
	var c models.Concept
	f.fill(t, &c)
	c.Namespace = "ns"
	requireFull(t, &c)
	m := &models.Memory{Namespace: "ns", ID: "m1", Kind: models.KindTurn, Content: "x", CreatedAt: fillBase}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: m, Concepts: []*models.Concept{&c}}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetConcepts(ctx, "ns", []string{c.Name})
	if err != nil || len(got) != 1 {
		t.Fatalf("GetConcepts = %d concepts, %v", len(got), err)
	}
	requireEqual(t, "concept (insertConcept)", got[0], &c)

	// Written again: merged and stored by updateConcept.
	var again models.Concept
	f.fill(t, &again)
	again.Namespace, again.Name = "ns", c.Name
	m2 := &models.Memory{Namespace: "ns", ID: "m2", Kind: models.KindTurn, Content: "x", CreatedAt: fillBase}
	if err := s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: m2, Concepts: []*models.Concept{&again}}}); err != nil {
		t.Fatal(err)
	}
	want := c
	want.Aliases = append(slices.Clone(c.Aliases), again.Aliases...)
	want.Mentions = c.Mentions + again.Mentions
	want.LastSeen = again.LastSeen // later: filled after c's
	got, err = s.GetConcepts(ctx, "ns", []string{c.Name})
	if err != nil || len(got) != 1 {
		t.Fatalf("GetConcepts = %d concepts, %v", len(got), err)
	}
	requireEqual(t, "concept (updateConcept)", got[0], &want)
}

func TestQueueAndJobRunRoundTrip(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "salience.db"))
	f := &filler{}
	var it models.ResurfaceItem
	f.fill(t, &it)
	it.Namespace = "ns"
	requireFull(t, &it)
	for range 2 { // the second time through the upsert's update
		if err := s.Enqueue(ctx, []*models.ResurfaceItem{&it}); err != nil {
			t.Fatal(err)
		}
		q, err := s.Queue(ctx, "ns", 0)
		if err != nil || len(q) != 1 {
			t.Fatalf("Queue = %d items, %v", len(q), err)
		}
		requireEqual(t, "queue item", q[0], &it)
		id := it.MemoryID
		f.fill(t, &it)
		it.Namespace, it.MemoryID = "ns", id
	}

	var run models.JobRun
	f.fill(t, &run)
	requireFull(t, &run)
	for range 2 {
		if err := s.RecordJobRun(ctx, &run); err != nil {
			t.Fatal(err)
		}
		runs, err := s.FindJobRuns(ctx, "", 0)
		if err != nil || len(runs) != 1 {
			t.Fatalf("FindJobRuns = %d runs, %v", len(runs), err)
		}
		requireEqual(t, "job run", runs[0], &run)
		id := run.ID
		f.fill(t, &run)
		run.ID = id
	}
}

// sqlStatement is what TestGeneratedSQL checks of a statement: its text and argument names.
type sqlStatement struct {
	name, sql string
	args      []string
}

func describe[R any](name string, st statement[R]) sqlStatement {
	out := sqlStatement{name: name, sql: st.sql}
	for _, c := range st.args {
		out.args = append(out.args, c.name)
	}
	return out
}

var (
	insertColumnsRE = regexp.MustCompile(`^INSERT INTO \w+ \(([^)]*)\) VALUES \(([^)]*)\)`)
	setRE           = regexp.MustCompile(`(\w+) = \?`)
	excludedRE      = regexp.MustCompile(`(\w+) = excluded\.(\w+)`)
)

// TestGeneratedSQL checks each generated statement: it names each column once, and binds
// one argument per placeholder, the argument of the column the placeholder stands for.
func TestGeneratedSQL(t *testing.T) {
	stmts := []sqlStatement{
		describe("insertMemory", insertMemory), describe("updateMemoryMeta", updateMemoryMeta),
		describe("updateSurfacingOutcome", updateSurfacingOutcome), describe("updateSurfacing", updateSurfacing),
		describe("insertEvent", insertEvent), describe("upsertConversation", upsertConversation),
		describe("insertEdge", insertEdge), describe("upsertEdge", upsertEdge),
		describe("insertConcept", insertConcept), describe("updateConcept", updateConcept),
		describe("upsertQueue", upsertQueue), describe("upsertJobRun", upsertJobRun),
	}
	for _, st := range stmts {
		t.Run(st.name, func(t *testing.T) {
			if n := strings.Count(st.sql, "?"); n != len(st.args) {
				t.Fatalf("%d placeholders, %d arguments: %s", n, len(st.args), st.sql)
			}
			if dup := duplicate(st.args); dup != "" {
				t.Fatalf("binds %s twice: %s", dup, st.sql)
			}
			var named []string
			if m := insertColumnsRE.FindStringSubmatch(st.sql); m != nil {
				named = strings.Split(m[1], ", ")
				if got := strings.Split(m[2], ", "); len(got) != len(named) {
					t.Fatalf("%d columns, %d values: %s", len(named), len(got), st.sql)
				}
				var set []string
				for _, x := range excludedRE.FindAllStringSubmatch(st.sql, -1) {
					if x[1] != x[2] {
						t.Fatalf("%s set from excluded.%s", x[1], x[2])
					}
					set = append(set, x[1])
				}
				if dup := duplicate(set); dup != "" {
					t.Fatalf("the upsert sets %s twice", dup)
				}
			} else {
				for _, x := range setRE.FindAllStringSubmatch(st.sql, -1) {
					named = append(named, x[1])
				}
			}
			if !slices.Equal(named, st.args) {
				t.Fatalf("placeholders stand for %v, arguments are %v: %s", named, st.args, st.sql)
			}
		})
	}
}

func duplicate(ss []string) string {
	seen := map[string]bool{}
	for _, s := range ss {
		if seen[s] {
			return s
		}
		seen[s] = true
	}
	return ""
}

// TestColumnListsMatchSchema checks each column list against the migrated schema: a
// migration that adds a column must add it to the list too, and the other way round.
func TestColumnListsMatchSchema(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "salience.db"))
	lists := map[string][]string{
		memoryRows.name: memoryRows.names(), surfacingRows.name: surfacingRows.names(), eventRows.name: eventRows.names(),
		conversationRows.name: conversationRows.names(), edgeRows.name: edgeRows.names(), conceptRows.name: conceptRows.names(),
		queueRows.name: queueRows.names(), jobRunRows.name: jobRunRows.names(), decisionRows.name: decisionRows.names(),
		experimentRows.name: experimentRows.names(),
	}
	for table, list := range lists {
		rows, err := s.rdb.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		var schema []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			schema = append(schema, n)
		}
		rows.Close()
		slices.Sort(schema)
		list = slices.Sorted(slices.Values(list))
		if !slices.Equal(schema, list) {
			t.Errorf("table %s: schema has %v, the column list %v", table, schema, list)
		}
	}
}

// columnFields names, for every column whose Go field is not its name in CamelCase, the
// field it holds: the test's own map, written apart from the column lists, so that two
// columns holding each other's fields (consistent both ways, so no round trip shows it)
// are found too. SQL filters and indexes read the columns by name.
var columnFields = map[string]string{
	"ns": "Namespace", "id": "ID", "conversation_id": "ConversationID", "turn_id": "TurnID",
	"memory_id": "MemoryID", "surfacing_id": "SurfacingID", "parent_id": "ParentID", "message_id": "MessageID",
	"conversation_type": "ConvType", "arm_probability": "ArmProb", "latency_ms": "LatencyMS",
	"src": "From", "dst": "To", "trigger_kind": "Trigger", "started_at": "Start", "ended_at": "End",
	"irrelevant_contexts": "IrrelevantContexts", "experiment_id": "Experiment",
}

// fieldFor returns the field of v that column holds.
func fieldFor(t *testing.T, v reflect.Value, table, column string) reflect.Value {
	t.Helper()
	name, ok := columnFields[column]
	if !ok {
		for part := range strings.SplitSeq(column, "_") {
			name += strings.ToUpper(part[:1]) + part[1:]
		}
	}
	if table == "memories" && slices.Contains([]string{"conversation_id", "message_id", "speaker", "role"}, column) {
		v = v.FieldByName("Source")
	}
	if table == "conversations" && column == "id" {
		name = "ConversationID"
	}
	f := v.FieldByName(name)
	if !f.IsValid() {
		t.Fatalf("table %s: no field %s for column %s", table, name, column)
	}
	return f
}

// stored returns how a field's value is stored: the raw value SQLite returns for it.
func stored(t *testing.T, f reflect.Value) any {
	t.Helper()
	if tm, ok := f.Interface().(time.Time); ok {
		return tm.UnixNano()
	}
	switch f.Kind() {
	case reflect.String:
		return f.String()
	case reflect.Int, reflect.Int64:
		return f.Int()
	case reflect.Float64:
		return f.Float()
	case reflect.Bool:
		return int64(boolInt(f.Bool()))
	}
	if e, ok := f.Interface().([]float32); ok {
		return encVector(e)
	}
	if c, ok := f.Interface().(models.Components); ok {
		return encComponents(c)
	}
	b, err := json.Marshal(f.Interface())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestColumnsHoldTheirFields writes full rows and reads each column by name in SQL.
func TestColumnsHoldTheirFields(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "salience.db"))
	f := &filler{}
	m, _ := fullMemory(t, f)
	m.ChunkCount = 0
	sf := fullSurfacing(t, f)
	var e models.Event
	var c models.ConversationState
	var edge models.Edge
	var concept models.Concept
	var it models.ResurfaceItem
	var run models.JobRun
	for _, p := range []any{&e, &c, &edge, &concept, &it, &run} {
		f.fill(t, p)
	}
	e.Namespace, e.Type, c.Namespace, edge.Namespace, concept.Namespace, it.Namespace = "ns", models.EventUsed, "ns", "ns", "ns", "ns"
	edge.Weight = 0.75 // must lie in 0..1
	sf.MemoryID = m.ID
	concept.Mentions = 1 // a new concept stores max(Mentions, 1): one keeps the written value
	err := errors.Join(
		s.CreateMemories(ctx, []*models.MemoryWrite{{Memory: m, Edges: []*models.Edge{&edge}, Concepts: []*models.Concept{&concept}}}),
		s.RecordSurfacings(ctx, []*models.Surfacing{sf}, &c),
		s.Update(ctx, func(tx models.Tx) error { return tx.InsertEvent(&e) }),
		s.Enqueue(ctx, []*models.ResurfaceItem{&it}),
		s.RecordJobRun(ctx, &run))
	if err != nil {
		t.Fatal(err)
	}
	m.SurfaceCount, m.LastSurfaced = m.SurfaceCount+1, sf.At // RecordSurfacings counts the surfacing
	if sf.At.Before(m.LastSurfaced) {
		t.Fatal("fill order changed: the surfacing must be later than the memory's last surfacing")
	}
	rows := map[string]any{"memories": m, "surfacings": sf, "events": &e, "conversations": &c, "edges": &edge,
		"concepts": &concept, "queue": &it, "job_runs": &run}
	lists := map[string][]string{
		memoryRows.name: memoryRows.names(), surfacingRows.name: surfacingRows.names(), eventRows.name: eventRows.names(),
		conversationRows.name: conversationRows.names(), edgeRows.name: edgeRows.names(), conceptRows.name: conceptRows.names(),
		queueRows.name: queueRows.names(), jobRunRows.name: jobRunRows.names(),
	}
	if err := s.settle(ctx); err != nil { // folds the surfacing into the counters
		t.Fatal(err)
	}
	var n int
	var last int64
	if err := s.rdb.QueryRowContext(ctx, `SELECT n, last FROM surfaced WHERE ns = ? AND id = ?`, m.Namespace, m.ID).Scan(&n, &last); err != nil {
		t.Fatal(err)
	}
	if n != m.SurfaceCount || last != encTime(m.LastSurfaced) {
		t.Errorf("surfaced holds %d, %d; want %d, %d", n, last, m.SurfaceCount, encTime(m.LastSurfaced))
	}
	db, err := sql.Open("sqlite", s.Path()) // the stored values as another program reads them
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for table, cols := range lists {
		v := reflect.ValueOf(rows[table]).Elem()
		for _, col := range cols {
			if table == memoryRows.name && (col == "surface_count" || col == "last_surfaced") {
				continue // kept in surfaced, above (surfaced.go)
			}
			want := stored(t, fieldFor(t, v, table, col))
			var got any
			if err := db.QueryRowContext(ctx, `SELECT `+col+` FROM `+table).Scan(&got); err != nil {
				t.Fatalf("%s.%s: %v", table, col, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s.%s holds %v, want %v", table, col, got, want)
			}
		}
	}
}
