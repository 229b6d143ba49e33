package models

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestValidateStoredConcept: the concept checks both stores share, each failure naming its
// field; a valid concept comes back as a normalized copy that owns its aliases.
func TestValidateStoredConcept(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ok := Concept{Name: "  Berlin ", Kind: ConceptEntity, Aliases: []string{"BER"}, FirstSeen: t0}
	with := func(f func(*Concept)) *Concept { c := ok; f(&c); return &c }
	for _, tc := range []struct {
		name, field string // field "" = valid
		c           *Concept
		msg         string
	}{
		{"missing", "concepts[0]", nil, "concept is missing"},
		{"other namespace", "concepts[0].namespace", with(func(c *Concept) { c.Namespace = "other" }), "concept of another namespace"},
		{"empty name", "concepts[0].name", with(func(c *Concept) { c.Name = " ?! " }), "concept name is empty"},
		{"no kind", "concepts[0].kind", with(func(c *Concept) { c.Kind = "" }), "concept kind is required"},
		{"negative mentions", "concepts[0].mentions", with(func(c *Concept) { c.Mentions = -1 }), "mentions must not be negative"},
		{"time out of range", "concepts[0].last_seen", with(func(c *Concept) { c.LastSeen = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }), ""},
	} {
		_, err := ValidateStoredConcept(tc.c, "ns", "concepts[0]")
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.field || (tc.msg != "" && ErrorMessage(err) != tc.msg) {
			t.Errorf("%s: error %v (field %q), want EINVALID on %q: %q", tc.name, err, ErrorField(err), tc.field, tc.msg)
		}
	}
	got, err := ValidateStoredConcept(&ok, "ns", "concepts[0]")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "berlin" || got.Namespace != "ns" || got.Kind != ConceptEntity || !got.FirstSeen.Equal(t0) {
		t.Fatalf("got %+v, want berlin in ns", got)
	}
	got.Aliases[0] = "changed"
	if ok.Aliases[0] != "BER" || ok.Name != "  Berlin " {
		t.Fatalf("the caller's concept changed: %+v", ok)
	}
}

// TestValidateStoredEdge: the edge checks both stores share, each failure naming its field.
func TestValidateStoredEdge(t *testing.T) {
	ok := Edge{From: "m1", To: "c:x", Type: EdgeMentions, Weight: 0.3}
	with := func(f func(*Edge)) *Edge { e := ok; f(&e); return &e }
	for _, tc := range []struct {
		name  string
		e     *Edge
		field string // "" = valid
	}{
		{"valid", &ok, ""},
		{"missing", nil, "edge"},
		{"other namespace", with(func(e *Edge) { e.Namespace = "other" }), "edge.namespace"},
		{"no end", with(func(e *Edge) { e.To = "" }), "edge"},
		{"no type", with(func(e *Edge) { e.Type = "" }), "edge.type"},
		{"weight above 1", with(func(e *Edge) { e.Weight = 1.5 }), "edge.weight"},
		{"NaN weight", with(func(e *Edge) { e.Weight = math.NaN() }), "edge.weight"},
		{"negative co-occurrences", with(func(e *Edge) { e.CoOccurrences = -1 }), "edge.co_occurrences"},
		{"control character", with(func(e *Edge) { e.Fact = "a\nb" }), "edge"},
		{"time out of range", with(func(e *Edge) { e.LastDecayed = time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC) }), "edge.last_decayed"},
	} {
		got, err := ValidateStoredEdge(tc.e, "ns", "edge")
		if tc.field == "" {
			if err != nil || got.Namespace != "ns" || got == tc.e {
				t.Errorf("%s: %+v, %v; want a copy in namespace ns", tc.name, got, err)
			}
			continue
		}
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.field {
			t.Errorf("%s: error %v (field %q), want EINVALID on %q", tc.name, err, ErrorField(err), tc.field)
		}
	}
}

// TestValidateStoredRecords: the checks both stores run before recording a surfacing, a
// conversation's state, an event, a decision, a queue item or a memory's learned state —
// each failure naming its field, so SQLite and Neo4j refuse the same input the same way.
func TestValidateStoredRecords(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	old := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)
	long := string(make([]byte, MaxIDBytes+1))
	sf := Surfacing{Namespace: "ns", ID: "s1", MemoryID: "m1", Mode: ModeAmbient, At: at}
	surf := func(f func(*Surfacing)) func() error {
		return func() error { s := sf; f(&s); return ValidateStoredSurfacing(&s, "surfacings[0]") }
	}
	st := ConversationState{Namespace: "ns", ConversationID: "c1", UpdatedAt: at}
	state := func(f func(*ConversationState)) func() error {
		return func() error { s := st; f(&s); return ValidateStoredState(&s) }
	}
	ev := Event{Namespace: "ns", ID: "e1", Type: EventUsed, At: at}
	event := func(f func(*Event)) func() error {
		return func() error { e := ev; f(&e); return ValidateStoredEvent(&e) }
	}
	dc := Decision{Namespace: "ns", TurnID: "t1", Prob: 0.5, At: at}
	decision := func(f func(*Decision)) func() error {
		return func() error { d := dc; f(&d); return ValidateStoredDecision(&d) }
	}
	it := ResurfaceItem{Namespace: "ns", MemoryID: "m1", DueAt: at}
	item := func(f func(*ResurfaceItem)) func() error {
		return func() error { i := it; f(&i); return ValidateResurfaceItem(&i, "items[0]") }
	}
	mm := Memory{Namespace: "ns", ID: "m1", Confidence: 0.5}
	meta := func(f func(*Memory)) func() error {
		return func() error { m := mm; f(&m); return ValidateStoredMeta(&m) }
	}
	for _, tc := range []struct {
		name  string
		check func() error
		field string // "" = valid
	}{
		{"surfacing valid", surf(func(*Surfacing) {}), ""},
		{"surfacing missing", func() error { return ValidateStoredSurfacing(nil, "surfacings[0]") }, "surfacings[0]"},
		{"surfacing namespace", surf(func(s *Surfacing) { s.Namespace = "" }), "surfacings[0].namespace"},
		{"surfacing id", surf(func(s *Surfacing) { s.ID = long }), "surfacings[0].id"},
		{"surfacing memory", surf(func(s *Surfacing) { s.MemoryID = "" }), "surfacings[0].memory_id"},
		{"surfacing mode", surf(func(s *Surfacing) { s.Mode = "loud" }), "surfacings[0].mode"},
		{"surfacing at", surf(func(s *Surfacing) { s.At = time.Time{} }), "surfacings[0].at"},
		{"surfacing latency", surf(func(s *Surfacing) { s.LatencyMS = -1 }), "surfacings[0].latency_ms"},
		{"surfacing settings version", surf(func(s *Surfacing) { s.SettingsVersion = -1 }), "surfacings[0].settings_version"},
		{"surfacing score", surf(func(s *Surfacing) { s.ArmProb = math.Inf(1) }), "surfacings[0].score"},
		{"surfacing outcome", surf(func(s *Surfacing) { s.Outcome = "maybe" }), "surfacings[0].outcome"},
		{"surfacing outcome time", surf(func(s *Surfacing) { s.OutcomeAt = old }), "surfacings[0].outcome_at"},
		{"state valid", state(func(*ConversationState) {}), ""},
		{"state namespace", state(func(s *ConversationState) { s.Namespace = "" }), "state.namespace"},
		{"state conversation", state(func(s *ConversationState) { s.ConversationID = "" }), "state.conversation_id"},
		{"state time", state(func(s *ConversationState) { s.UpdatedAt = old }), "state.updated_at"},
		{"event valid", event(func(*Event) {}), ""},
		{"event missing", func() error { return ValidateStoredEvent(nil) }, "event"},
		{"event id", event(func(e *Event) { e.ID = "" }), "id"},
		{"event type", event(func(e *Event) { e.Type = "liked" }), "type"},
		{"event at", event(func(e *Event) { e.At = old }), "at"},
		{"decision valid", decision(func(*Decision) {}), ""},
		{"decision turn", decision(func(d *Decision) { d.TurnID = "" }), "turn_id"},
		{"decision probability", decision(func(d *Decision) { d.Prob = 1.5 }), "probability"},
		{"decision reward", decision(func(d *Decision) { d.Reward = math.NaN() }), "probability"},
		{"decision surfaced", decision(func(d *Decision) { d.Surfaced = -1 }), "surfaced"},
		{"decision rewarded at", decision(func(d *Decision) { d.RewardedAt = old }), "rewarded_at"},
		{"item valid", item(func(*ResurfaceItem) {}), ""},
		{"item missing", func() error { return ValidateResurfaceItem(nil, "items[0]") }, "items[0]"},
		{"item memory", item(func(i *ResurfaceItem) { i.MemoryID = "" }), "items[0].memory_id"},
		{"item score", item(func(i *ResurfaceItem) { i.Score = math.NaN() }), "items[0].score"},
		{"item queued at", item(func(i *ResurfaceItem) { i.QueuedAt = old }), "items[0].queued_at"},
		{"meta valid", meta(func(*Memory) {}), ""},
		{"meta missing", func() error { return ValidateStoredMeta(nil) }, "memory"},
		{"meta id", meta(func(m *Memory) { m.ID = "" }), "id"},
		{"meta confidence", meta(func(m *Memory) { m.RecentDismissals = math.Inf(-1) }), "confidence"},
		{"meta due", meta(func(m *Memory) { m.Schedule.Due = old }), "schedule.due"},
	} {
		err := tc.check()
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.field {
			t.Errorf("%s: error %v (field %q), want EINVALID on %q", tc.name, err, ErrorField(err), tc.field)
		}
	}
}

// TestValidateJobsAndLeases: the job-run, lease and experiment-stop checks both stores share.
func TestValidateJobsAndLeases(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	run := JobRun{ID: "r1", Job: "decay", Start: at}
	for _, tc := range []struct {
		name  string
		err   error
		field string // "" = valid
	}{
		{"run valid", ValidateStoredJobRun(&run), ""},
		{"run missing", ValidateStoredJobRun(nil), "run"},
		{"run id", ValidateStoredJobRun(&JobRun{Job: "decay"}), "id"},
		{"run job", ValidateStoredJobRun(&JobRun{ID: "r1"}), "job"},
		{"run end", ValidateStoredJobRun(&JobRun{ID: "r1", Job: "decay", End: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)}), "end"},
		{"lease valid", ValidateLeaseRequest("decay", "a", time.Minute, at), ""},
		{"lease name", ValidateLeaseRequest("", "a", time.Minute, at), "name"},
		{"lease holder", ValidateLeaseRequest("decay", "", time.Minute, at), "holder"},
		{"lease ttl", ValidateLeaseRequest("decay", "a", 0, at), "ttl"},
		{"lease now", ValidateLeaseRequest("decay", "a", time.Minute, time.Time{}), "now"},
		{"lease until out of range", ValidateLeaseRequest("decay", "a", math.MaxInt64, at), "ttl"},
		{"stop valid", ValidateStopExperiment("ns", "e1", at), ""},
		{"stop namespace", ValidateStopExperiment("bad ns!", "e1", at), "namespace"},
		{"stop id", ValidateStopExperiment("ns", "", at), "id"},
		{"stop time missing", ValidateStopExperiment("ns", "e1", time.Time{}), "stopped_at"},
		{"stop time out of range", ValidateStopExperiment("ns", "e1", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)), "stopped_at"},
	} {
		if tc.field == "" {
			if tc.err != nil {
				t.Errorf("%s: %v", tc.name, tc.err)
			}
			continue
		}
		if ErrorCode(tc.err) != EINVALID || ErrorField(tc.err) != tc.field {
			t.Errorf("%s: error %v (field %q), want EINVALID on %q", tc.name, tc.err, ErrorField(tc.err), tc.field)
		}
	}
}

// TestMemoryFilterCheck: the page a filter asks for, and the filters every store refuses.
func TestMemoryFilterCheck(t *testing.T) {
	for _, tc := range []struct {
		f         MemoryFilter
		limit     int
		ascending bool
		field     string // "" = valid
	}{
		{MemoryFilter{}, 100, false, ""},
		{MemoryFilter{Namespace: "ns", Sort: "created_asc", Limit: 1000}, 1000, true, ""},
		{MemoryFilter{Sort: "created_desc", Limit: 1, Offset: 5}, 1, false, ""},
		{MemoryFilter{Namespace: "bad ns!"}, 0, false, "namespace"},
		{MemoryFilter{Kinds: []Kind{KindTurn, "dream"}}, 0, false, "kinds[1]"},
		{MemoryFilter{Sort: "newest"}, 0, false, "sort"},
		{MemoryFilter{Limit: 1001}, 0, false, "limit"},
		{MemoryFilter{Limit: -1}, 0, false, "limit"},
		{MemoryFilter{Offset: -1}, 0, false, "offset"},
	} {
		limit, asc, err := tc.f.Check()
		if tc.field == "" {
			if err != nil || limit != tc.limit || asc != tc.ascending {
				t.Errorf("%+v: %d, %v, %v; want %d, %v", tc.f, limit, asc, err, tc.limit, tc.ascending)
			}
			continue
		}
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.field {
			t.Errorf("%+v: error %v (field %q), want EINVALID on %q", tc.f, err, ErrorField(err), tc.field)
		}
	}
}

// TestEmbedderIdentityAdmit: how a batch's vectors join a namespace's, as both stores
// record it; a mismatch names the embedding with the sizes or names at odds.
func TestEmbedderIdentityAdmit(t *testing.T) {
	e1, e2 := EmbedderIdentity{Name: "e1", Dims: 384}, EmbedderIdentity{Name: "e2", Dims: 384}
	for _, tc := range []struct {
		name    string
		cur, b  EmbedderIdentity
		want    EmbedderIdentity
		wantErr string // "" = admitted
	}{
		{"no vectors in the batch", e1, EmbedderIdentity{}, e1, ""},
		{"no vectors in the batch, none stored", EmbedderIdentity{}, EmbedderIdentity{}, EmbedderIdentity{}, ""},
		{"first vectors", EmbedderIdentity{}, e1, e1, ""},
		{"first vectors, no name", EmbedderIdentity{Name: "old"}, EmbedderIdentity{Dims: 8}, EmbedderIdentity{Dims: 8}, ""},
		{"same embedder", e1, e1, e1, ""},
		{"batch names none", e1, EmbedderIdentity{Dims: 384}, e1, ""},
		{"vectors from before names", EmbedderIdentity{Dims: 384}, e1, e1, ""},
		{"other size", e1, EmbedderIdentity{Name: "e1", Dims: 768}, e1, "embedding has 768 dimensions; namespace ns uses 384"},
		{"other embedder", e1, e2, e1, "embedding made by e2; namespace ns holds vectors of e1"},
	} {
		got, err := tc.cur.Admit("ns", tc.b)
		if tc.wantErr == "" {
			if err != nil || got != tc.want {
				t.Errorf("%s: Admit = %+v, %v; want %+v", tc.name, got, err, tc.want)
			}
			continue
		}
		if ErrorCode(err) != EINVALID || ErrorField(err) != "embedding" || ErrorMessage(err) != tc.wantErr {
			t.Errorf("%s: error %v, want EINVALID on embedding: %q", tc.name, err, tc.wantErr)
		}
	}
}

// TestFilterChecks: the listing filters' checks both stores run, and the limits they stand for.
func TestFilterChecks(t *testing.T) {
	bad := strings.Repeat("n", 200) // a namespace ValidateNamespace refuses
	if err := ValidateNamespace(bad); err == nil {
		t.Fatal("the bad namespace is valid")
	}
	for _, tc := range []struct {
		name      string
		check     func() (int, error)
		want      int
		wantField string // "" = valid
	}{
		{"surfacings: default", (&SurfacingFilter{}).Check, 1000, ""},
		{"surfacings: given", (&SurfacingFilter{Namespace: "a", Limit: 7}).Check, 7, ""},
		{"surfacings: negative", (&SurfacingFilter{Limit: -1}).Check, 0, "limit"},
		{"surfacings: bad namespace", (&SurfacingFilter{Namespace: bad, Limit: -1}).Check, 0, "namespace"},
		{"decisions: default", (&DecisionFilter{Namespace: "a"}).Check, 1000, ""},
		{"decisions: given", (&DecisionFilter{Namespace: "a", Limit: 3}).Check, 3, ""},
		{"decisions: negative", (&DecisionFilter{Namespace: "a", Limit: -1}).Check, 0, "limit"},
		{"decisions: no namespace", (&DecisionFilter{}).Check, 0, "namespace"},
		{"events: all", func() (int, error) { return 0, (&EventFilter{}).Check() }, 0, ""},
		{"events: negative", func() (int, error) { return 0, (&EventFilter{Namespace: "a", Limit: -1}).Check() }, 0, "limit"},
		{"events: bad namespace", func() (int, error) { return 0, (&EventFilter{Namespace: bad}).Check() }, 0, "namespace"},
	} {
		got, err := tc.check()
		if tc.wantField == "" {
			if err != nil || got != tc.want {
				t.Errorf("%s: Check = %d, %v; want %d", tc.name, got, err, tc.want)
			}
			continue
		}
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.wantField {
			t.Errorf("%s: error %v (field %q), want EINVALID on %q", tc.name, err, ErrorField(err), tc.wantField)
		}
		if tc.wantField == "limit" && ErrorMessage(err) != "limit must not be negative" {
			t.Errorf("%s: message %q", tc.name, ErrorMessage(err))
		}
	}
}

// TestValidateStoredExperiment: what a store refuses before it creates an experiment.
func TestValidateStoredExperiment(t *testing.T) {
	valid := func() *Experiment {
		return &Experiment{ID: "e1", Namespace: "ns", Name: "weights", Status: ExperimentRunning, CreatedAt: time.Unix(1, 0),
			Variants: []Variant{{Name: "control", Share: 0.5}, {Name: "b", Share: 0.5}}}
	}
	if err := ValidateStoredExperiment(valid()); err != nil {
		t.Fatalf("valid experiment: %v", err)
	}
	late := valid()
	late.StoppedAt = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	noName := valid()
	noName.Name = ""
	for _, tc := range []struct {
		name, field, msg string
		e                *Experiment
	}{
		{"missing", "experiment", "experiment is missing", nil},
		{"invalid (Validate)", "name", "name is required (at most 200 bytes)", noName},
		{"stop time out of range", "stopped_at", "time 2300-01-01T00:00:00Z is outside the years 1678–2262", late},
	} {
		err := ValidateStoredExperiment(tc.e)
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.field || ErrorMessage(err) != tc.msg {
			t.Errorf("%s: error %v (field %q), want EINVALID on %q: %q", tc.name, err, ErrorField(err), tc.field, tc.msg)
		}
	}
}

// TestValidateReembed: a re-embedding needs a namespace, a positive size and batch, and the
// embedder's name.
func TestValidateReembed(t *testing.T) {
	to := EmbedderIdentity{Name: "e1", Dims: 384}
	if err := ValidateReembed("ns", to, 100); err != nil {
		t.Fatalf("valid request: %v", err)
	}
	for _, tc := range []struct {
		name, ns, field, msg string
		to                   EmbedderIdentity
		batch                int
	}{
		{"bad namespace", "", "namespace", "", to, 100},
		{"no size", "ns", "dims", "dims and batch must be positive", EmbedderIdentity{Name: "e1"}, 100},
		{"no batch", "ns", "dims", "dims and batch must be positive", to, 0},
		{"no name", "ns", "embedder", "the embedder's name is required", EmbedderIdentity{Dims: 384}, 100},
	} {
		err := ValidateReembed(tc.ns, tc.to, tc.batch)
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.field || (tc.msg != "" && ErrorMessage(err) != tc.msg) {
			t.Errorf("%s: error %v (field %q), want EINVALID on %q: %q", tc.name, err, ErrorField(err), tc.field, tc.msg)
		}
	}
}

// TestGetMemory: GetMemory checks its arguments before it asks, passes the store's error on,
// and answers ENOTFOUND when GetMemories finds nothing.
func TestGetMemory(t *testing.T) {
	m1 := &Memory{ID: "m1", Namespace: "ns"}
	var asked []string
	get := func(_ context.Context, ns string, ids []string) ([]*Memory, error) {
		asked = append(asked, ns+"/"+strings.Join(ids, ","))
		switch ids[0] {
		case "m1":
			return []*Memory{m1}, nil
		case "broken":
			return nil, Errorf(EUNAVAILABLE, "down")
		}
		return nil, nil
	}
	ctx := context.Background()
	if got, err := GetMemory(ctx, get, "ns", "m1"); err != nil || got != m1 {
		t.Fatalf("m1: %v, %v", got, err)
	}
	for _, tc := range []struct {
		ns, id, code, field, msg string
	}{
		{"ns", "gone", ENOTFOUND, "", "memory gone not found"},
		{"ns", "broken", EUNAVAILABLE, "", "down"},
		{"", "m1", EINVALID, "namespace", ""},
		{"ns", "", EINVALID, "id", "id is required"},
	} {
		_, err := GetMemory(ctx, get, tc.ns, tc.id)
		if ErrorCode(err) != tc.code || ErrorField(err) != tc.field || (tc.msg != "" && ErrorMessage(err) != tc.msg) {
			t.Errorf("%q/%q: error %v, want %s on %q: %q", tc.ns, tc.id, err, tc.code, tc.field, tc.msg)
		}
	}
	if want := []string{"ns/m1", "ns/gone", "ns/broken"}; !slices.Equal(asked, want) {
		t.Fatalf("asked %v, want %v (nothing for invalid arguments)", asked, want)
	}
}

// TestValidateKey: the namespace first, then the id under the field the caller names.
func TestValidateKey(t *testing.T) {
	if err := ValidateKey("ns", "m1", "id"); err != nil {
		t.Fatalf("valid key: %v", err)
	}
	for _, tc := range []struct {
		ns, id, field, msg string
	}{
		{"", "", "namespace", ""},
		{"ns", "", "turn_id", "id is required"},
		{"ns", strings.Repeat("x", MaxIDBytes+1), "turn_id", "id is longer than 200 bytes"},
	} {
		err := ValidateKey(tc.ns, tc.id, "turn_id")
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.field || (tc.msg != "" && ErrorMessage(err) != tc.msg) {
			t.Errorf("%q/%q: error %v (field %q), want EINVALID on %q: %q", tc.ns, tc.id, err, ErrorField(err), tc.field, tc.msg)
		}
	}
}

// TestLeaseTaken: a lease is another's only while someone else holds it and it has not
// expired; expiring exactly at now frees it.
func TestLeaseTaken(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		cur     string
		expires time.Time
		want    bool
	}{
		{"another's, live", "b", now.Add(time.Second), true},
		{"another's, expired", "b", now.Add(-time.Second), false},
		{"another's, expiring now", "b", now, false},
		{"own, live", "a", now.Add(time.Minute), false},
		{"released (nobody)", "", now.Add(time.Minute), false},
	} {
		if got := LeaseTaken(tc.cur, tc.expires, "a", now); got != tc.want {
			t.Errorf("%s: LeaseTaken = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range [][2]string{{"", "a"}, {"jobs", ""}} {
		err := ValidateLeaseRelease(tc[0], tc[1])
		if ErrorCode(err) != EINVALID || ErrorField(err) != "name" || ErrorMessage(err) != "lease name and holder are required" {
			t.Errorf("release %q by %q: %v", tc[0], tc[1], err)
		}
	}
	if err := ValidateLeaseRelease("jobs", "a"); err != nil {
		t.Errorf("valid release: %v", err)
	}
}

// TestValidateStoredTurn: each surfacing under its index, then the state; an empty turn is
// valid.
func TestValidateStoredTurn(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	sf := func(id string) *Surfacing {
		return &Surfacing{Namespace: "ns", ID: id, MemoryID: "m1", Mode: ModeAmbient, At: at}
	}
	state := &ConversationState{Namespace: "ns", ConversationID: "c1", UpdatedAt: at}
	if err := ValidateStoredTurn([]*Surfacing{sf("s1"), sf("s2")}, state); err != nil {
		t.Fatalf("valid turn: %v", err)
	}
	if err := ValidateStoredTurn(nil, nil); err != nil {
		t.Fatalf("empty turn: %v", err)
	}
	noMemory := sf("s2")
	noMemory.MemoryID = ""
	for _, tc := range []struct {
		name, field string
		ss          []*Surfacing
		state       *ConversationState
	}{
		{"second surfacing", "surfacings[1].memory_id", []*Surfacing{sf("s1"), noMemory}, state},
		{"missing surfacing", "surfacings[0]", []*Surfacing{nil}, nil},
		{"surfacings before state", "surfacings[1].memory_id", []*Surfacing{sf("s1"), noMemory}, &ConversationState{Namespace: "ns"}},
		{"state", "state.conversation_id", []*Surfacing{sf("s1")}, &ConversationState{Namespace: "ns"}},
	} {
		err := ValidateStoredTurn(tc.ss, tc.state)
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.field {
			t.Errorf("%s: error %v (field %q), want EINVALID on %q", tc.name, err, ErrorField(err), tc.field)
		}
	}
}

// TestValidateEnqueue: each item is checked under its index; no items is valid.
func TestValidateEnqueue(t *testing.T) {
	it := func(mem string, score float64) *ResurfaceItem {
		return &ResurfaceItem{Namespace: "ns", MemoryID: mem, Score: score}
	}
	if err := ValidateEnqueue(nil); err != nil {
		t.Fatalf("no items: %v", err)
	}
	if err := ValidateEnqueue([]*ResurfaceItem{it("m1", 1), it("m2", 0.5)}); err != nil {
		t.Fatalf("valid items: %v", err)
	}
	for _, tc := range []struct {
		items []*ResurfaceItem
		field string
	}{
		{[]*ResurfaceItem{it("m1", 1), nil}, "items[1]"},
		{[]*ResurfaceItem{it("m1", 1), it("m2", math.NaN())}, "items[1].score"},
		{[]*ResurfaceItem{it("", 1)}, "items[0].memory_id"},
	} {
		err := ValidateEnqueue(tc.items)
		if ErrorCode(err) != EINVALID || ErrorField(err) != tc.field {
			t.Errorf("error %v (field %q), want EINVALID on %q", err, ErrorField(err), tc.field)
		}
	}
}

// TestValidateConversationRef: the namespace first, then a conversation id is required.
func TestValidateConversationRef(t *testing.T) {
	if err := ValidateConversationRef("ns", "c1"); err != nil {
		t.Fatalf("valid: %v", err)
	}
	if err := ValidateConversationRef("", ""); ErrorField(err) != "namespace" {
		t.Errorf("bad namespace: %v", err)
	}
	err := ValidateConversationRef("ns", "")
	if ErrorCode(err) != EINVALID || ErrorField(err) != "conversation_id" || ErrorMessage(err) != "conversation id is required" {
		t.Errorf("no conversation: %v", err)
	}
}

// TestValidateEdgeScan: a namespace, then a page of at least one edge.
func TestValidateEdgeScan(t *testing.T) {
	if err := ValidateEdgeScan("ns", 1); err != nil {
		t.Fatalf("valid: %v", err)
	}
	if err := ValidateEdgeScan("", 0); ErrorField(err) != "namespace" {
		t.Errorf("bad namespace: %v", err)
	}
	err := ValidateEdgeScan("ns", 0)
	if ErrorCode(err) != EINVALID || ErrorField(err) != "limit" || ErrorMessage(err) != "limit must be at least 1" {
		t.Errorf("limit 0: %v", err)
	}
}
