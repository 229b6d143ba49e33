package models

import (
	"errors"
	"math"
	"slices"
	"strings"
	"time"
)

// Times a store can hold: nanoseconds since 1970 in an int64, as both stores keep them.
var (
	storeMinTime = time.Unix(0, math.MinInt64+1).UTC()
	storeMaxTime = time.Unix(0, math.MaxInt64).UTC()
)

// The stores' time codec, one for both: a time is int64 unix nanoseconds UTC — exact,
// comparable and indexable — and NoTime stands for the zero time ("unset"). An int64 of
// nanoseconds covers 1678–2262; CheckStoredTime rejects anything outside (NoTime among it),
// so nothing wraps and no valid time encodes to NoTime.
const NoTime = math.MinInt64

// EncodeTime is t as a store keeps it.
func EncodeTime(t time.Time) int64 {
	if t.IsZero() {
		return NoTime
	}
	return t.UnixNano()
}

// DecodeTime is the time a store's n stands for.
func DecodeTime(n int64) time.Time {
	if n == NoTime {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// FilterTime encodes a filter bound, clamping an out-of-range time instead of failing. The
// zero time is NoTime, below every stored time, unset ones included: "before the zero time"
// matches nothing.
func FilterTime(t time.Time) int64 {
	switch {
	case t.IsZero():
		return NoTime
	case !t.After(storeMinTime):
		return math.MinInt64 + 1
	case !t.Before(storeMaxTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// ValidateStoredMemory checks what every store relies on before it writes a memory (content
// rules are ingest's, Memory.Validate). One function, so SQLite and Neo4j refuse the same
// memories with the same fields.
func ValidateStoredMemory(m *Memory, field string) error {
	if m == nil {
		return Invalid(field, "memory is missing")
	}
	if err := ValidateNamespace(m.Namespace); err != nil {
		return WithFieldPrefix(err, field+".")
	}
	if err := ValidateStoredID(m.ID, field+".id"); err != nil {
		return err
	}
	// Concept node ids start with "c:"; memory ids never hold ':' so the two cannot collide.
	if strings.ContainsRune(m.ID, ':') {
		return Invalid(field+".id", "memory ids must not contain ':'")
	}
	if !m.Kind.Valid() {
		return Invalid(field+".kind", "unknown kind %q", m.Kind)
	}
	if m.CreatedAt.IsZero() {
		return Invalid(field+".created_at", "created_at is required")
	}
	for _, t := range []struct {
		name string
		t    time.Time
	}{
		{"created_at", m.CreatedAt}, {"valid_at", m.ValidAt}, {"invalid_at", m.InvalidAt},
		{"last_used", m.LastUsed}, {"last_surfaced", m.LastSurfaced},
	} {
		if err := CheckStoredTime(field+"."+t.name, t.t); err != nil {
			return err
		}
	}
	for _, f := range []float64{m.Importance, m.Confidence, m.RecentDismissals} {
		if !finiteNumber(f) {
			return Invalid(field, "importance, confidence and recent_dismissals must be finite")
		}
	}
	return nil
}

// ValidateStoredID checks an id a store is asked to write or look up: present and no longer
// than MaxIDBytes.
func ValidateStoredID(id, field string) error {
	if id == "" {
		return Invalid(field, "id is required")
	}
	if len(id) > MaxIDBytes {
		return Invalid(field, "id is longer than %d bytes", MaxIDBytes)
	}
	return nil
}

// ValidateKey checks the namespace and the id (named field) of an object a store is asked
// to read, change or delete.
func ValidateKey(ns, id, field string) error {
	if err := ValidateNamespace(ns); err != nil {
		return err
	}
	return ValidateStoredID(id, field)
}

// ValidateConversationRef checks the namespace and conversation id of a lookup by
// conversation (Store.LastInConversation).
func ValidateConversationRef(ns, conversationID string) error {
	if err := ValidateNamespace(ns); err != nil {
		return err
	}
	if conversationID == "" {
		return Invalid("conversation_id", "conversation id is required")
	}
	return nil
}

// ValidateEdgeScan checks a page of a namespace's edges (Store.ScanEdges): at least one edge.
func ValidateEdgeScan(ns string, limit int) error {
	if err := ValidateNamespace(ns); err != nil {
		return err
	}
	if limit < 1 {
		return Invalid("limit", "limit must be at least 1")
	}
	return nil
}

// ValidateStoredMeta checks the fields a transaction's PutMemory writes: a memory's learned
// state, not its content.
func ValidateStoredMeta(m *Memory) error {
	if err := validateStoredKey(m); err != nil {
		return err
	}
	if !finiteNumber(m.Confidence) || !finiteNumber(m.RecentDismissals) {
		return Invalid("confidence", "confidence and recent_dismissals must be finite")
	}
	return errors.Join(CheckStoredTime("last_used", m.LastUsed), CheckStoredTime("last_surfaced", m.LastSurfaced),
		CheckStoredTime("schedule.last_review", m.Schedule.LastReview), CheckStoredTime("schedule.due", m.Schedule.Due),
		CheckStoredTime("schedule.cooldown_until", m.Schedule.CooldownTo))
}

// validateStoredKey checks that m is given, with a valid namespace and id.
func validateStoredKey(m *Memory) error {
	if m == nil {
		return Invalid("memory", "memory is missing")
	}
	return ValidateKey(m.Namespace, m.ID, "id")
}

// ValidateStoredEdit checks a memory before a store writes its editable fields
// (Tx.EditMemory): what the store can hold; the rules of an edit live in ingest.
func ValidateStoredEdit(m *Memory) error {
	if err := validateStoredKey(m); err != nil {
		return err
	}
	if m.IsChunk() {
		return Invalid("id", "%s is a chunk: edit its memory %s", Clip(m.ID, 40), Clip(m.ParentID, 40))
	}
	if !finiteNumber(m.Importance) {
		return Invalid("importance", "importance must be finite")
	}
	return errors.Join(CheckStoredTime("valid_at", m.ValidAt), CheckStoredTime("invalid_at", m.InvalidAt))
}

// ValidateStoredSurfacing checks a surfacing before a store records it.
func ValidateStoredSurfacing(s *Surfacing, field string) error {
	if s == nil {
		return Invalid(field, "surfacing is missing")
	}
	if err := ValidateNamespace(s.Namespace); err != nil {
		return WithFieldPrefix(err, field+".")
	}
	if err := ValidateStoredID(s.ID, field+".id"); err != nil {
		return err
	}
	if s.MemoryID == "" {
		return Invalid(field+".memory_id", "memory id is required")
	}
	if !s.Mode.Valid() {
		return Invalid(field+".mode", "unknown mode %q", s.Mode)
	}
	if s.At.IsZero() {
		return Invalid(field+".at", "at is required")
	}
	if !finiteNumber(s.LatencyMS) || s.LatencyMS < 0 {
		return Invalid(field+".latency_ms", "latency must be a finite number of milliseconds, not negative")
	}
	if s.SettingsVersion < 0 {
		return Invalid(field+".settings_version", "settings version must not be negative")
	}
	if !finiteNumber(s.Score) || !finiteNumber(s.Threshold) || !finiteNumber(s.ArmProb) {
		return Invalid(field+".score", "score, threshold and arm probability must be finite")
	}
	if s.Outcome != "" && !s.Outcome.Valid() {
		return Invalid(field+".outcome", "unknown outcome %q", s.Outcome)
	}
	return errors.Join(CheckStoredTime(field+".at", s.At), CheckStoredTime(field+".outcome_at", s.OutcomeAt))
}

// ValidateStoredTurn checks a turn's surfacings, then its conversation state (nil: none),
// before a store records them (Store.RecordSurfacings).
func ValidateStoredTurn(ss []*Surfacing, state *ConversationState) error {
	for i, sf := range ss {
		if err := ValidateStoredSurfacing(sf, sprintf("surfacings[%d]", i)); err != nil {
			return err
		}
	}
	if state != nil {
		return ValidateStoredState(state)
	}
	return nil
}

// ValidateStoredState checks a conversation's state before a store records it with a turn.
func ValidateStoredState(st *ConversationState) error {
	if err := ValidateNamespace(st.Namespace); err != nil {
		return WithFieldPrefix(err, "state.")
	}
	if st.ConversationID == "" {
		return Invalid("state.conversation_id", "conversation id is required")
	}
	return CheckStoredTime("state.updated_at", st.UpdatedAt)
}

// ValidateStoredEvent checks an engagement event before a store appends it.
func ValidateStoredEvent(e *Event) error {
	if e == nil {
		return Invalid("event", "event is missing")
	}
	if err := ValidateNamespace(e.Namespace); err != nil {
		return err
	}
	if err := ValidateStoredID(e.ID, "id"); err != nil {
		return err
	}
	if !e.Type.Valid() {
		return Invalid("type", "unknown event type %q", e.Type)
	}
	if e.At.IsZero() {
		return Invalid("at", "at is required")
	}
	return CheckStoredTime("at", e.At)
}

// ValidateStoredDecision checks a threshold decision before a store records it.
func ValidateStoredDecision(d *Decision) error {
	if d == nil {
		return Invalid("decision", "decision is missing")
	}
	if err := ValidateNamespace(d.Namespace); err != nil {
		return err
	}
	if err := ValidateStoredID(d.TurnID, "turn_id"); err != nil {
		return err
	}
	if !finiteNumber(d.Threshold) || !finiteNumber(d.Prob) || !finiteNumber(d.Reward) || d.Prob < 0 || d.Prob > 1 {
		return Invalid("probability", "threshold, probability and reward must be finite, the probability in [0, 1]")
	}
	if d.Surfaced < 0 {
		return Invalid("surfaced", "surfaced must not be negative")
	}
	if d.At.IsZero() {
		return Invalid("at", "at is required")
	}
	return errors.Join(CheckStoredTime("at", d.At), CheckStoredTime("rewarded_at", d.RewardedAt))
}

// ValidateResurfaceItem checks a resurfacing queue item before a store enqueues it.
func ValidateResurfaceItem(it *ResurfaceItem, field string) error {
	if it == nil {
		return Invalid(field, "item is missing")
	}
	if err := ValidateNamespace(it.Namespace); err != nil {
		return WithFieldPrefix(err, field+".")
	}
	if err := ValidateStoredID(it.MemoryID, field+".memory_id"); err != nil {
		return err
	}
	if !finiteNumber(it.Score) {
		return Invalid(field+".score", "score must be finite")
	}
	return errors.Join(CheckStoredTime(field+".due_at", it.DueAt), CheckStoredTime(field+".queued_at", it.QueuedAt))
}

// ValidateEnqueue checks the items of a Store.Enqueue, each under items[i].
func ValidateEnqueue(items []*ResurfaceItem) error {
	for i, it := range items {
		if err := ValidateResurfaceItem(it, sprintf("items[%d]", i)); err != nil {
			return err
		}
	}
	return nil
}

// ValidateStoredJobRun checks a job run before a store records it.
func ValidateStoredJobRun(run *JobRun) error {
	if run == nil {
		return Invalid("run", "job run is missing")
	}
	if err := ValidateStoredID(run.ID, "id"); err != nil {
		return err
	}
	if run.Job == "" {
		return Invalid("job", "job name is required")
	}
	return errors.Join(CheckStoredTime("start", run.Start), CheckStoredTime("end", run.End))
}

// ValidateLeaseRequest checks a request to take or renew a lease until now+ttl.
func ValidateLeaseRequest(name, holder string, ttl time.Duration, now time.Time) error {
	switch {
	case name == "":
		return Invalid("name", "lease name is required")
	case holder == "":
		return Invalid("holder", "lease holder is required")
	case ttl <= 0:
		return Invalid("ttl", "ttl must be positive")
	case now.IsZero():
		return Invalid("now", "now is required")
	}
	return errors.Join(CheckStoredTime("now", now), CheckStoredTime("ttl", now.Add(ttl)))
}

// ValidateStoredExperiment checks an experiment before a store creates it: present, valid
// (Experiment.Validate) and with times a store can hold.
func ValidateStoredExperiment(e *Experiment) error {
	if e == nil {
		return Invalid("experiment", "experiment is missing")
	}
	if err := e.Validate(); err != nil {
		return err
	}
	return errors.Join(CheckStoredTime("created_at", e.CreatedAt), CheckStoredTime("stopped_at", e.StoppedAt))
}

// ValidateReembed checks a request to re-embed namespace ns's units with the embedder to,
// batch units a transaction.
func ValidateReembed(ns string, to EmbedderIdentity, batch int) error {
	if err := ValidateNamespace(ns); err != nil {
		return err
	}
	if to.Dims <= 0 || batch <= 0 {
		return Invalid("dims", "dims and batch must be positive")
	}
	if to.Name == "" {
		return Invalid("embedder", "the embedder's name is required")
	}
	return nil
}

// ValidateLeaseRelease checks a request to release a lease.
func ValidateLeaseRelease(name, holder string) error {
	if name == "" || holder == "" {
		return Invalid("name", "lease name and holder are required")
	}
	return nil
}

// LeaseTaken reports whether a lease is another's when holder asks for it at now: its
// holder (cur; "" is nobody) is someone else and it expires after now. Otherwise it is
// free, expired or holder's own, and holder takes or renews it.
func LeaseTaken(cur string, expires time.Time, holder string, now time.Time) bool {
	return cur != "" && cur != holder && expires.After(now)
}

// ValidateStopExperiment checks a request to stop experiment id of namespace ns at at.
func ValidateStopExperiment(ns, id string, at time.Time) error {
	if err := ValidateKey(ns, id, "id"); err != nil {
		return err
	}
	if at.IsZero() {
		return Invalid("stopped_at", "the stop time is required")
	}
	return CheckStoredTime("stopped_at", at)
}

// ValidatePutEdge checks an edge a transaction is asked to write (Tx.PutEdge): present, of
// a valid namespace, and as ValidateStoredEdge wants it; it returns the copy to write.
func ValidatePutEdge(e *Edge) (*Edge, error) {
	if e == nil {
		return nil, Invalid("edge", "edge is missing")
	}
	if err := ValidateNamespace(e.Namespace); err != nil {
		return nil, err
	}
	return ValidateStoredEdge(e, e.Namespace, "edge")
}

// ValidateStoredEdge checks what every store relies on before it writes an edge and returns
// a copy with its namespace set to ns when empty. One function, so SQLite and Neo4j refuse
// the same edges with the same fields.
func ValidateStoredEdge(e *Edge, ns, field string) (*Edge, error) {
	if e == nil {
		return nil, Invalid(field, "edge is missing")
	}
	c := *e
	if c.Namespace == "" {
		c.Namespace = ns
	}
	switch {
	case c.Namespace != ns:
		return nil, Invalid(field+".namespace", "edge of another namespace")
	case c.From == "" || c.To == "":
		return nil, Invalid(field, "an edge needs both ends")
	case c.Type == "":
		return nil, Invalid(field+".type", "edge type is required")
	case !(c.Weight >= 0 && c.Weight <= 1):
		return nil, Invalid(field+".weight", "weight must be between 0 and 1")
	case c.CoOccurrences < 0:
		return nil, Invalid(field+".co_occurrences", "co_occurrences must not be negative")
	case hasControl(c.From) || hasControl(c.To) || hasControl(string(c.Type)) || hasControl(c.Fact):
		return nil, Invalid(field, "edge ends, type and fact must not contain control characters")
	}
	if err := errors.Join(CheckStoredTime(field+".last_co_occurred", c.LastCoOccurred), CheckStoredTime(field+".last_decayed", c.LastDecayed)); err != nil {
		return nil, err
	}
	return &c, nil
}

// ValidateStoredConcept checks a concept written with a memory and returns a copy, its own
// aliases, with its name normalized and its namespace set to ns when empty. One function,
// so SQLite and Neo4j refuse the same concepts with the same fields.
func ValidateStoredConcept(c *Concept, ns, field string) (*Concept, error) {
	if c == nil {
		return nil, Invalid(field, "concept is missing")
	}
	cc := *c
	cc.Aliases = slices.Clone(c.Aliases)
	cc.Name = NormalizeConcept(c.Name)
	if cc.Namespace == "" {
		cc.Namespace = ns
	}
	switch {
	case cc.Namespace != ns:
		return nil, Invalid(field+".namespace", "concept of another namespace")
	case cc.Name == "":
		return nil, Invalid(field+".name", "concept name is empty")
	case cc.Kind == "":
		return nil, Invalid(field+".kind", "concept kind is required")
	case cc.Mentions < 0:
		return nil, Invalid(field+".mentions", "mentions must not be negative")
	}
	if err := errors.Join(CheckStoredTime(field+".first_seen", cc.FirstSeen), CheckStoredTime(field+".last_seen", cc.LastSeen)); err != nil {
		return nil, err
	}
	return &cc, nil
}

// CheckStoredTime fails when t is set and outside the times a store can hold.
func CheckStoredTime(field string, t time.Time) error {
	if t.IsZero() || (t.After(storeMinTime) && t.Before(storeMaxTime)) {
		return nil
	}
	return Invalid(field, "time %s is outside the years 1678–2262", t.Format(time.RFC3339))
}

// hasControl reports whether s holds an ASCII control character: the SQLite rebuild packs
// edge fields with one as separator, and Neo4j refuses the same edges so both stores agree.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}
