package models

import (
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind is what a memory is.
type Kind string

const (
	KindTurn     Kind = "turn"     // one message of a conversation
	KindSummary  Kind = "summary"  // a summary of a stretch of conversation
	KindCrystal  Kind = "crystal"  // a distilled, long-lived insight about a relationship or self
	KindAnchor   Kind = "anchor"   // an identity anchor: who the bot is, what it promised
	KindFact     Kind = "fact"     // a statement, optionally with a subject–predicate–object triple
	KindInsight  Kind = "insight"  // an observation the bot drew
	KindDocument Kind = "document" // reference material
)

// Kinds lists every valid kind.
var Kinds = []Kind{KindTurn, KindSummary, KindCrystal, KindAnchor, KindFact, KindInsight, KindDocument}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// Limits on input. They are defaults; the server may be configured with a smaller content limit.
const (
	MaxContentBytes   = 64 << 10 // 64 KiB per memory
	MaxBatch          = 1000     // memories or events per request
	MaxListItems      = 64       // domains, triggers, concepts per memory
	MaxListItemBytes  = 200      // one domain, trigger or concept
	MaxNamespaceBytes = 64
	MaxIDBytes        = 200 // conversation, message and client ids
)

var namespaceRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.\-]{0,63}$`)

// ValidateNamespace checks a namespace name: 1–64 characters of letters, digits, '_', '-', '.',
// starting with a letter or digit.
func ValidateNamespace(ns string) error {
	if !namespaceRE.MatchString(ns) {
		return Invalid("namespace", "namespace must be 1-64 characters of letters, digits, '_', '-' or '.', starting with a letter or digit")
	}
	return nil
}

// Source says where a memory came from.
type Source struct {
	ConversationID string `json:"conversation_id,omitempty"`
	MessageID      string `json:"message_id,omitempty"`
	Speaker        string `json:"speaker,omitempty"`
	// Role is who said it: RoleUser, RoleAssistant (the bot's own words), or "" — unknown,
	// as in every memory stored before roles, and treated as the user's.
	Role Role `json:"role,omitempty"`
}

// Role says whose words a memory holds. Recall never takes the bot's own reply as evidence
// for a question it merely repeats (package recall, restates).
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Triple is a fact's subject–predicate–object form.
type Triple struct {
	Subject   string `json:"subject"`
	Predicate string `json:"predicate"`
	Object    string `json:"object"`
}

// Memory is one thing a bot lived through, or a chunk of one.
//
// A memory whose content is longer than the chunking threshold is stored as a parent holding
// the full text plus chunks (ParentID set, ChunkIndex 0..ChunkCount-1); search indexes the
// chunks, and recall collapses them to their best chunk per parent.
type Memory struct {
	// Identity and content.
	ID        string    `json:"id"`
	Namespace string    `json:"namespace"`
	Kind      Kind      `json:"kind"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
	ValidAt   time.Time `json:"valid_at,omitzero"`   // when it became true; zero = CreatedAt
	InvalidAt time.Time `json:"invalid_at,omitzero"` // when it stopped being true; zero = still true

	// Description.
	Source     Source   `json:"source,omitzero"`
	Importance float64  `json:"importance"`
	Domains    []string `json:"domains,omitempty"`
	Triggers   []string `json:"triggers,omitempty"`
	Concepts   []string `json:"concepts,omitempty"`
	Triple     *Triple  `json:"triple,omitempty"`
	Sensitive  bool     `json:"sensitive,omitempty"`

	// Chunking.
	ParentID   string `json:"parent_id,omitempty"`
	ChunkIndex int    `json:"chunk_index,omitempty"`
	ChunkCount int    `json:"chunk_count,omitempty"`

	// Retrieval metadata, moved by engagement and jobs.
	Confidence         float64    `json:"confidence"`
	UsageCount         int        `json:"usage_count"`
	LastUsed           time.Time  `json:"last_used,omitzero"`
	SurfaceCount       int        `json:"surface_count"`
	LastSurfaced       time.Time  `json:"last_surfaced,omitzero"`
	RecentDismissals   float64    `json:"recent_dismissals"`
	IrrelevantContexts [][]string `json:"irrelevant_contexts,omitempty"`
	// Learned are the words of the turns that used the memory (feedback expansion, package
	// learn): a down-weighted, bounded, decaying field of the text index.
	Learned []LearnedTerm `json:"learned,omitempty"`

	// Decay scheduling state (policy-specific; zero until the first review).
	Schedule Schedule `json:"schedule,omitzero"`

	// Embedding of the indexed text (this memory, or this chunk). Never serialized to clients.
	Embedding []float32 `json:"-"`
}

// LearnedTerm is one word a memory became findable by, its weight and when it last grew.
type LearnedTerm struct {
	Term   string    `json:"t"`
	Weight float64   `json:"w"`
	At     time.Time `json:"at"`
}

// Schedule is the spaced-repetition state of a memory.
type Schedule struct {
	Stability  float64   `json:"stability,omitempty"`
	Difficulty float64   `json:"difficulty,omitempty"`
	LastReview time.Time `json:"last_review,omitzero"`
	Due        time.Time `json:"due,omitzero"`
	Reps       int       `json:"reps,omitempty"`
	Lapses     int       `json:"lapses,omitempty"`
	CooldownTo time.Time `json:"cooldown_until,omitzero"`
}

// DefaultConfidence is the confidence of a new memory.
const DefaultConfidence = 0.5

// Clone returns a deep copy of m: neither can change the other.
func (m *Memory) Clone() *Memory {
	c := *m
	c.Domains = slices.Clone(m.Domains)
	c.Triggers = slices.Clone(m.Triggers)
	c.Concepts = slices.Clone(m.Concepts)
	if m.Triple != nil {
		t := *m.Triple
		c.Triple = &t
	}
	if m.IrrelevantContexts != nil {
		c.IrrelevantContexts = make([][]string, len(m.IrrelevantContexts))
		for i, ctx := range m.IrrelevantContexts {
			c.IrrelevantContexts[i] = slices.Clone(ctx)
		}
	}
	c.Learned = slices.Clone(m.Learned)
	c.Embedding = slices.Clone(m.Embedding)
	return &c
}

// MemoriesInOrder is a store's GetMemories answer from the memories it found (byID): in the
// order of ids, missing ones skipped, and an id asked twice answered twice, with a Clone, so
// every answer is the caller's own.
func MemoriesInOrder(ids []string, byID map[string]*Memory) []*Memory {
	out := make([]*Memory, 0, len(byID))
	seen := make(map[string]bool, len(byID))
	for _, id := range ids {
		m, ok := byID[id]
		if !ok {
			continue
		}
		if seen[id] {
			m = m.Clone()
		}
		seen[id] = true
		out = append(out, m)
	}
	return out
}

// IsChunk reports whether m is a chunk of a longer memory.
func (m *Memory) IsChunk() bool { return m.ParentID != "" }

// Indexed reports whether m itself is a search unit: a chunk, or a memory that was not chunked.
func (m *Memory) Indexed() bool { return m.ParentID != "" || m.ChunkCount == 0 }

// Time returns the time the memory is about: ValidAt when known, else CreatedAt.
func (m *Memory) Time() time.Time {
	if !m.ValidAt.IsZero() {
		return m.ValidAt
	}
	return m.CreatedAt
}

// ValidNow reports whether a fact is still true at now.
func (m *Memory) ValidNow(now time.Time) bool {
	return m.InvalidAt.IsZero() || m.InvalidAt.After(now)
}

// Resurfaceable reports whether m may be brought back unasked at now: a whole memory (not a
// chunk), not sensitive, still true, and not in a dismissal's cooldown. The decay scan
// queues only such memories, and whoever reads the queue checks again, since a memory can
// change after the scan (PATCH, a dismissal, its invalid_at passing).
func (m *Memory) Resurfaceable(now time.Time) bool {
	return !m.IsChunk() && !m.Sensitive && m.ValidNow(now) && !now.Before(m.Schedule.CooldownTo)
}

// Validate checks a memory as submitted by a client (before ids, times and chunks are
// assigned). Errors name the JSON field. maxContent ≤ 0 means MaxContentBytes.
func (m *Memory) Validate(maxContent int) error {
	if maxContent <= 0 {
		maxContent = MaxContentBytes
	}
	if m.Kind == "" {
		return Invalid("kind", "kind is required (one of %s)", kindList())
	}
	if !m.Kind.Valid() {
		return Invalid("kind", "unknown kind %q (one of %s)", Clip(string(m.Kind), 40), kindList())
	}
	if Blank(m.Content) {
		return Invalid("content", "content is empty")
	}
	if len(m.Content) > maxContent {
		return &Error{Code: ETOOLARGE, Field: "content", Message: sprintf("content is %d bytes, over the limit of %d", len(m.Content), maxContent)}
	}
	if !utf8.ValidString(m.Content) {
		return Invalid("content", "content is not valid UTF-8")
	}
	if m.Importance < 0 || m.Importance > 1 || m.Importance != m.Importance {
		return Invalid("importance", "importance must be between 0 and 1")
	}
	if !m.ValidAt.IsZero() && !m.InvalidAt.IsZero() && !m.InvalidAt.After(m.ValidAt) {
		return Invalid("invalid_at", "invalid_at must be after valid_at")
	}
	for _, l := range []struct {
		name string
		vals []string
	}{{"domains", m.Domains}, {"triggers", m.Triggers}, {"concepts", m.Concepts}} {
		if len(l.vals) > MaxListItems {
			return Invalid(l.name, "at most %d %s", MaxListItems, l.name)
		}
		for i, v := range l.vals {
			if strings.TrimSpace(v) == "" || len(v) > MaxListItemBytes || !utf8.ValidString(v) {
				return Invalid(sprintf("%s[%d]", l.name, i), "must be non-empty UTF-8 text of at most %d bytes", MaxListItemBytes)
			}
		}
	}
	if t := m.Triple; t != nil {
		if strings.TrimSpace(t.Subject) == "" || strings.TrimSpace(t.Predicate) == "" || strings.TrimSpace(t.Object) == "" {
			return Invalid("triple", "a triple needs subject, predicate and object")
		}
		if len(t.Subject)+len(t.Predicate)+len(t.Object) > 3*MaxListItemBytes {
			return Invalid("triple", "triple parts must be at most %d bytes each", MaxListItemBytes)
		}
	}
	for _, f := range []struct{ name, val string }{
		{"source.conversation_id", m.Source.ConversationID},
		{"source.message_id", m.Source.MessageID},
		{"source.speaker", m.Source.Speaker},
	} {
		if len(f.val) > MaxIDBytes || !utf8.ValidString(f.val) {
			return Invalid(f.name, "must be UTF-8 text of at most %d bytes", MaxIDBytes)
		}
	}
	if r := m.Source.Role; r != "" && r != RoleUser && r != RoleAssistant {
		return Invalid("source.role", "role must be %q or %q (or absent: unknown, taken as the user's)", RoleUser, RoleAssistant)
	}
	return nil
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// MemoryFilter selects memories for listing. Nil/zero fields do not filter. Chunks are never
// listed; they are reached through their parent.
type MemoryFilter struct {
	Namespace      string
	Kinds          []Kind
	ConversationID string
	Since, Until   time.Time // on CreatedAt, [Since, Until)
	IDs            []string

	// Sort: "created_desc" (default) or "created_asc".
	Sort   string
	Offset int
	Limit  int // 0 = 100; at most 1000
}

// Check validates f as every store reads it and returns the page size it asks for (100 when
// unset) and whether it lists oldest first.
func (f *MemoryFilter) Check() (limit int, ascending bool, err error) {
	if f.Namespace != "" {
		if err := ValidateNamespace(f.Namespace); err != nil {
			return 0, false, err
		}
	}
	for i, k := range f.Kinds {
		if !k.Valid() {
			return 0, false, Invalid(sprintf("kinds[%d]", i), "unknown kind %q", k)
		}
	}
	switch f.Sort {
	case "", "created_desc":
	case "created_asc":
		ascending = true
	default:
		return 0, false, Invalid("sort", "sort must be created_desc or created_asc")
	}
	switch limit = f.Limit; {
	case limit == 0:
		limit = 100
	case limit < 0 || limit > 1000:
		return 0, false, Invalid("limit", "limit must be between 1 and 1000")
	}
	if f.Offset < 0 {
		return 0, false, Invalid("offset", "offset must not be negative")
	}
	return limit, ascending, nil
}
