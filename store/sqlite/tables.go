package sqlite

import (
	"slices"
	"time"

	"github.com/salience-ai/salience/models"
)

// The column list of every table that holds a models type (the schema is in migrations/),
// and the statements generated from them. A new column is one line here: its name, and the
// field it holds through the kind of column that encodes it.

// memories holds memories and chunks. Its JSON lists and the embedding are scanned raw into
// memoryRow and decoded by memoryRow.memory (memory_row.go), so that the rebuild decodes
// them apart from the goroutine that steps through the rows; everything else goes straight
// into the Memory.
var memoryRows = newTable("memories", []string{"ns", "id"},
	textCol("ns", func(r *memoryRow) *string { return &r.m.Namespace }),
	textCol("id", func(r *memoryRow) *string { return &r.m.ID }),
	textCol("parent_id", func(r *memoryRow) *string { return &r.m.ParentID }),
	textCol("kind", func(r *memoryRow) *string { return (*string)(&r.m.Kind) }),
	textCol("content", func(r *memoryRow) *string { return &r.m.Content }),
	timeCol("created_at", func(r *memoryRow) *time.Time { return &r.m.CreatedAt }),
	timeCol("valid_at", func(r *memoryRow) *time.Time { return &r.m.ValidAt }),
	timeCol("invalid_at", func(r *memoryRow) *time.Time { return &r.m.InvalidAt }),
	textCol("conversation_id", func(r *memoryRow) *string { return &r.m.Source.ConversationID }),
	textCol("message_id", func(r *memoryRow) *string { return &r.m.Source.MessageID }),
	textCol("speaker", func(r *memoryRow) *string { return &r.m.Source.Speaker }),
	textCol("role", func(r *memoryRow) *string { return (*string)(&r.m.Source.Role) }),
	floatCol("importance", func(r *memoryRow) *float64 { return &r.m.Importance }),
	rawCol("domains", func(r *memoryRow) any { return encStrings(r.m.Domains) }, func(r *memoryRow) *string { return &r.domains }),
	rawCol("triggers", func(r *memoryRow) any { return encStrings(r.m.Triggers) }, func(r *memoryRow) *string { return &r.triggers }),
	rawCol("concepts", func(r *memoryRow) any { return encStrings(r.m.Concepts) }, func(r *memoryRow) *string { return &r.concepts }),
	rawCol("triple", func(r *memoryRow) any { return encJSON(r.m.Triple, r.m.Triple == nil) }, func(r *memoryRow) *string { return &r.triple }),
	boolCol("sensitive", func(r *memoryRow) *bool { return &r.m.Sensitive }),
	intCol("chunk_index", func(r *memoryRow) *int { return &r.m.ChunkIndex }),
	intCol("chunk_count", func(r *memoryRow) *int { return &r.m.ChunkCount }),
	floatCol("confidence", func(r *memoryRow) *float64 { return &r.m.Confidence }),
	intCol("usage_count", func(r *memoryRow) *int { return &r.m.UsageCount }),
	timeCol("last_used", func(r *memoryRow) *time.Time { return &r.m.LastUsed }),
	intCol("surface_count", func(r *memoryRow) *int { return &r.m.SurfaceCount }),
	timeCol("last_surfaced", func(r *memoryRow) *time.Time { return &r.m.LastSurfaced }),
	floatCol("recent_dismissals", func(r *memoryRow) *float64 { return &r.m.RecentDismissals }),
	rawCol("irrelevant_contexts", func(r *memoryRow) any {
		return encJSON(r.m.IrrelevantContexts, len(r.m.IrrelevantContexts) == 0)
	}, func(r *memoryRow) *string { return &r.irrelevant }),
	rawCol("schedule", func(r *memoryRow) any { return encJSON(r.m.Schedule, r.m.Schedule == (models.Schedule{})) },
		func(r *memoryRow) *string { return &r.schedule }),
	rawCol("learned", func(r *memoryRow) any { return encJSON(r.m.Learned, len(r.m.Learned) == 0) },
		func(r *memoryRow) *string { return &r.learned }),
	column[memoryRow]{name: "embedding", value: func(r *memoryRow) any { return encVector(r.m.Embedding) },
		dest: func(r *memoryRow) any { return &r.embedding }},
)

// rawCol is a TEXT column scanned undecoded into a field of the row; the row decodes it.
func rawCol[R any](name string, value func(*R) any, raw func(*R) *string) column[R] {
	return column[R]{name: name, value: value, dest: func(r *R) any { return raw(r) }}
}

// memoryMeta are the columns Tx.PutMemory writes: the retrieval metadata and the schedule
// (setMeta copies the same fields in the cache).
var memoryMeta = []string{"confidence", "usage_count", "last_used", "surface_count", "last_surfaced",
	"recent_dismissals", "irrelevant_contexts", "schedule", "learned"}

var (
	insertMemory     = memoryRows.insert("")
	updateMemoryMeta = memoryRows.update(memoryMeta, memoryRows.key)
	// memoryEmbedding is the embedding's position among the scanned columns: the rebuild
	// scans it as sql.RawBytes to copy it once, into its batch's block.
	memoryEmbedding = memoryRows.pos["embedding"]
)

var surfacingRows = newTable("surfacings", []string{"ns", "id"},
	textCol("ns", func(s *models.Surfacing) *string { return &s.Namespace }),
	textCol("id", func(s *models.Surfacing) *string { return &s.ID }),
	textCol("conversation_id", func(s *models.Surfacing) *string { return &s.ConversationID }),
	textCol("turn_id", func(s *models.Surfacing) *string { return &s.TurnID }),
	textCol("memory_id", func(s *models.Surfacing) *string { return &s.MemoryID }),
	textCol("mode", func(s *models.Surfacing) *string { return (*string)(&s.Mode) }),
	intCol("rank", func(s *models.Surfacing) *int { return &s.Rank }),
	floatCol("score", func(s *models.Surfacing) *float64 { return &s.Score }),
	componentsCol("components", func(s *models.Surfacing) *models.Components { return &s.Components }),
	textCol("conversation_type", func(s *models.Surfacing) *string { return &s.ConvType }),
	floatCol("threshold", func(s *models.Surfacing) *float64 { return &s.Threshold }),
	floatCol("arm_probability", func(s *models.Surfacing) *float64 { return &s.ArmProb }),
	textCol("variant", func(s *models.Surfacing) *string { return &s.Variant }),
	textCol("experiment_id", func(s *models.Surfacing) *string { return &s.Experiment }),
	stringsCol("concepts", func(s *models.Surfacing) *[]string { return &s.Concepts }),
	timeCol("at", func(s *models.Surfacing) *time.Time { return &s.At }),
	textCol("outcome", func(s *models.Surfacing) *string { return (*string)(&s.Outcome) }),
	timeCol("outcome_at", func(s *models.Surfacing) *time.Time { return &s.OutcomeAt }),
	floatCol("latency_ms", func(s *models.Surfacing) *float64 { return &s.LatencyMS }),
	stringsCol("terms", func(s *models.Surfacing) *[]string { return &s.Terms }),
	floatCol("p_use", func(s *models.Surfacing) *float64 { return &s.PUse }),
	int64Col("model_version", func(s *models.Surfacing) *int64 { return &s.ModelVersion }),
	intCol("settings_version", func(s *models.Surfacing) *int { return &s.SettingsVersion }),
)

// surfacingIndexed are the key and the columns the surfacings table's indexes hold
// (surfacings_pending's condition reads the outcome, which an outcome update must set).
var surfacingIndexed = []string{"ns", "id", "conversation_id", "turn_id", "memory_id", "at"}

var (
	insertSurfacing = surfacingRows.insert("")
	selectSurfacing = surfacingRows.sel + ` WHERE ns = ? AND id = ?`
	// updateSurfacingOutcome is Tx.PutSurfacing's fast path. Recording an outcome never
	// changes the indexed columns, but an UPDATE that sets an indexed column rewrites that
	// index's entry even when the value stays the same, and engagement writes thousands of
	// outcomes a second. So it sets the other columns where the indexed ones still match;
	// updateSurfacing, every column, runs only when no row did.
	updateSurfacingOutcome = surfacingRows.update(surfacingRows.names(surfacingIndexed...), surfacingIndexed)
	updateSurfacing        = surfacingRows.update(surfacingRows.names(surfacingRows.key...), surfacingRows.key)
)

var eventRows = newTable("events", []string{"ns", "id"},
	textCol("ns", func(e *models.Event) *string { return &e.Namespace }),
	textCol("id", func(e *models.Event) *string { return &e.ID }),
	textCol("surfacing_id", func(e *models.Event) *string { return &e.SurfacingID }),
	textCol("memory_id", func(e *models.Event) *string { return &e.MemoryID }),
	textCol("conversation_id", func(e *models.Event) *string { return &e.ConversationID }),
	textCol("type", func(e *models.Event) *string { return (*string)(&e.Type) }),
	timeCol("at", func(e *models.Event) *time.Time { return &e.At }),
	stringsCol("concepts", func(e *models.Event) *[]string { return &e.Concepts }),
	boolCol("implicit", func(e *models.Event) *bool { return &e.Implicit }),
	int64Col("seq", func(e *models.Event) *int64 { return &e.Seq }),
)

var (
	insertEvent = eventRows.insert("")
	selectEvent = eventRows.sel + ` WHERE ns = ? AND id = ?`
)

var conversationRows = newTable("conversations", []string{"ns", "id"},
	textCol("ns", func(c *models.ConversationState) *string { return &c.Namespace }),
	textCol("id", func(c *models.ConversationState) *string { return &c.ConversationID }),
	textCol("type", func(c *models.ConversationState) *string { return &c.Type }),
	intCol("turns", func(c *models.ConversationState) *int { return &c.Turns }),
	stringsCol("recent_topics", func(c *models.ConversationState) *[]string { return &c.RecentTopics }),
	jsonCol("message_times", func(c *models.ConversationState) *[]time.Time { return &c.MessageTimes },
		func(ts []time.Time) bool { return len(ts) == 0 }),
	stringsCol("participants", func(c *models.ConversationState) *[]string { return &c.Participants }),
	timeCol("updated_at", func(c *models.ConversationState) *time.Time { return &c.UpdatedAt }),
	jsonCol("recent_surfaced", func(c *models.ConversationState) *[][]string { return &c.RecentSurfaced },
		func(ids [][]string) bool { return len(ids) == 0 }),
	jsonCol("recent_turns", func(c *models.ConversationState) *[][]string { return &c.RecentTurns },
		func(ts [][]string) bool { return len(ts) == 0 }),
)

var (
	selectConversation = conversationRows.sel + ` WHERE ns = ? AND id = ?`
	upsertConversation = conversationRows.upsert()
)

var edgeRows = newTable("edges", []string{"ns", "src", "dst", "type"},
	textCol("ns", func(e *models.Edge) *string { return &e.Namespace }),
	textCol("src", func(e *models.Edge) *string { return &e.From }),
	textCol("dst", func(e *models.Edge) *string { return &e.To }),
	textCol("type", func(e *models.Edge) *string { return (*string)(&e.Type) }),
	floatCol("weight", func(e *models.Edge) *float64 { return &e.Weight }),
	intCol("co_occurrences", func(e *models.Edge) *int { return &e.CoOccurrences }),
	timeCol("last_co_occurred", func(e *models.Edge) *time.Time { return &e.LastCoOccurred }),
	timeCol("last_decayed", func(e *models.Edge) *time.Time { return &e.LastDecayed }),
	textCol("predicate", func(e *models.Edge) *string { return &e.Predicate }),
	textCol("fact", func(e *models.Edge) *string { return &e.Fact }),
)

var (
	selectEdge = edgeRows.sel + ` WHERE ns = ? AND src = ? AND dst = ? AND type = ?`
	insertEdge = edgeRows.insert(`ON CONFLICT DO NOTHING`)
	upsertEdge = edgeRows.upsert()
)

var conceptRows = newTable("concepts", []string{"ns", "name"},
	textCol("ns", func(c *models.Concept) *string { return &c.Namespace }),
	textCol("name", func(c *models.Concept) *string { return &c.Name }),
	textCol("kind", func(c *models.Concept) *string { return (*string)(&c.Kind) }),
	stringsCol("aliases", func(c *models.Concept) *[]string { return &c.Aliases }),
	intCol("mentions", func(c *models.Concept) *int { return &c.Mentions }),
	timeCol("first_seen", func(c *models.Concept) *time.Time { return &c.FirstSeen }),
	timeCol("last_seen", func(c *models.Concept) *time.Time { return &c.LastSeen }),
)

var (
	selectConcept = conceptRows.sel + ` WHERE ns = ? AND name = ?`
	insertConcept = conceptRows.insert("")
	// updateConcept writes a merged concept; its kind stays the first writer's.
	updateConcept = conceptRows.update(conceptRows.names(append(slices.Clone(conceptRows.key), "kind")...), conceptRows.key)
)

var queueRows = newTable("queue", []string{"ns", "memory_id"},
	textCol("ns", func(it *models.ResurfaceItem) *string { return &it.Namespace }),
	textCol("memory_id", func(it *models.ResurfaceItem) *string { return &it.MemoryID }),
	timeCol("due_at", func(it *models.ResurfaceItem) *time.Time { return &it.DueAt }),
	floatCol("score", func(it *models.ResurfaceItem) *float64 { return &it.Score }),
	timeCol("queued_at", func(it *models.ResurfaceItem) *time.Time { return &it.QueuedAt }),
)

var upsertQueue = queueRows.upsert()

var jobRunRows = newTable("job_runs", []string{"id"},
	textCol("id", func(r *models.JobRun) *string { return &r.ID }),
	textCol("job", func(r *models.JobRun) *string { return &r.Job }),
	textCol("holder", func(r *models.JobRun) *string { return &r.Holder }),
	textCol("trigger_kind", func(r *models.JobRun) *string { return &r.Trigger }),
	timeCol("started_at", func(r *models.JobRun) *time.Time { return &r.Start }),
	timeCol("ended_at", func(r *models.JobRun) *time.Time { return &r.End }),
	intCol("items", func(r *models.JobRun) *int { return &r.Items }),
	textCol("error", func(r *models.JobRun) *string { return &r.Error }),
	boolCol("finished", func(r *models.JobRun) *bool { return &r.Finished }),
)

var upsertJobRun = jobRunRows.upsert()

// decisionRows holds the threshold bandit's decision per ambient turn.
var decisionRows = newTable("decisions", []string{"ns", "turn_id"},
	textCol("ns", func(d *models.Decision) *string { return &d.Namespace }),
	textCol("turn_id", func(d *models.Decision) *string { return &d.TurnID }),
	textCol("conversation_id", func(d *models.Decision) *string { return &d.ConversationID }),
	textCol("conv_type", func(d *models.Decision) *string { return &d.ConvType }),
	textCol("variant", func(d *models.Decision) *string { return &d.Variant }),
	textCol("experiment_id", func(d *models.Decision) *string { return &d.Experiment }),
	floatCol("latency_ms", func(d *models.Decision) *float64 { return &d.LatencyMS }),
	textCol("policy", func(d *models.Decision) *string { return &d.Policy }),
	intCol("arm", func(d *models.Decision) *int { return &d.Arm }),
	floatCol("threshold", func(d *models.Decision) *float64 { return &d.Threshold }),
	floatCol("prob", func(d *models.Decision) *float64 { return &d.Prob }),
	intCol("surfaced", func(d *models.Decision) *int { return &d.Surfaced }),
	timeCol("at", func(d *models.Decision) *time.Time { return &d.At }),
	boolCol("rewarded", func(d *models.Decision) *bool { return &d.Rewarded }),
	floatCol("reward", func(d *models.Decision) *float64 { return &d.Reward }),
	timeCol("rewarded_at", func(d *models.Decision) *time.Time { return &d.RewardedAt }),
	stringsCol("concepts", func(d *models.Decision) *[]string { return &d.Concepts }),
)

var (
	selectDecision = decisionRows.sel + ` WHERE ns = ? AND turn_id = ?`
	upsertDecision = decisionRows.upsert()
)

var (
	scanDecision     = scanRow(decisionRows)
	scanSurfacing    = scanRow(surfacingRows)
	scanEvent        = scanRow(eventRows)
	scanEdge         = scanRow(edgeRows)
	scanConcept      = scanRow(conceptRows)
	scanQueueItem    = scanRow(queueRows)
	scanJobRun       = scanRow(jobRunRows)
	scanConversation = scanRow(conversationRows)
)

// scanRow returns a scan function reading one row of t into a new R.
func scanRow[R any](t *table[R]) func(scanner) (*R, error) {
	return func(sc scanner) (*R, error) {
		var r R
		if err := t.scan(sc, &r); err != nil {
			return nil, err
		}
		return &r, nil
	}
}
