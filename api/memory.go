package api

import (
	"encoding/json"
	"time"
)

// Source says where a memory came from.
type Source struct {
	ConversationID string `json:"conversation_id,omitempty"`
	MessageID      string `json:"message_id,omitempty"`
	Speaker        string `json:"speaker,omitempty"`
	// Role is whose words these are: "user", or "assistant" for the bot's own replies, which
	// recall never takes as evidence for a question they only repeat. Absent: unknown, taken
	// as the user's (memories stored before roles). Any other value is refused (source.role).
	Role string `json:"role,omitempty"`
}

// Triple is a fact's subject–predicate–object form.
type Triple struct {
	Subject   string `json:"subject"`
	Predicate string `json:"predicate"`
	Object    string `json:"object"`
}

// MemoryInput is one memory as a client submits it to POST /v1/namespaces/{ns}/memories,
// either alone or as an element of CreateMemoriesRequest.Memories.
type MemoryInput struct {
	// Kind is one of turn, summary, crystal, anchor, fact, insight, document. Required.
	Kind string `json:"kind"`
	// Content is the text; required, at most the server's content limit (64 KiB by default).
	Content string `json:"content"`
	// CreatedAt defaults to the server's clock. It, ValidAt and InvalidAt must lie in the
	// years 1678 to 2261 (dates before 1970 are fine); "0001-01-01T00:00:00Z", the zero
	// time, is rejected rather than read as "not given".
	CreatedAt time.Time `json:"created_at,omitzero"`
	// ValidAt is when the content became true (zero: CreatedAt); InvalidAt when it stopped
	// being true (zero: still true). InvalidAt must be after ValidAt.
	ValidAt   time.Time `json:"valid_at,omitzero"`
	InvalidAt time.Time `json:"invalid_at,omitzero"`

	Source *Source `json:"source,omitempty"`
	// Importance is in 0..1.
	Importance float64 `json:"importance,omitempty"`
	// Domains, Triggers and Concepts take at most 64 items of at most 200 bytes each.
	// Concepts are extracted from the content when not given.
	Domains  []string `json:"domains,omitempty"`
	Triggers []string `json:"triggers,omitempty"`
	Concepts []string `json:"concepts,omitempty"`
	Triple   *Triple  `json:"triple,omitempty"`
	// Sensitive memories are returned by search but never volunteered in ambient recall.
	Sensitive bool `json:"sensitive,omitempty"`
}

// CreateMemoriesRequest is the batch form of POST /v1/namespaces/{ns}/memories: 1 to 1,000
// memories, written all or none.
type CreateMemoriesRequest struct {
	Memories []MemoryInput `json:"memories"`
}

// CreateMemoriesResponse lists the memories created, in the order submitted.
type CreateMemoriesResponse struct {
	Memories []Memory `json:"memories"`
}

// ListMemoriesResponse is a page of memories and the total that match the filter.
type ListMemoriesResponse struct {
	Memories []Memory `json:"memories"`
	Total    int      `json:"total"`
}

// Memory is a stored memory as the server returns it. Chunks of long memories are never
// returned on their own: ChunkCount says how many chunks the memory was indexed as.
type Memory struct {
	ID         string    `json:"id"`
	Namespace  string    `json:"namespace"`
	Kind       string    `json:"kind"`
	Content    string    `json:"content"`
	CreatedAt  time.Time `json:"created_at"`
	ValidAt    time.Time `json:"valid_at,omitzero"`
	InvalidAt  time.Time `json:"invalid_at,omitzero"`
	Source     *Source   `json:"source,omitempty"`
	Importance float64   `json:"importance"`
	Domains    []string  `json:"domains,omitempty"`
	Triggers   []string  `json:"triggers,omitempty"`
	Concepts   []string  `json:"concepts,omitempty"`
	Triple     *Triple   `json:"triple,omitempty"`
	Sensitive  bool      `json:"sensitive"`
	ChunkCount int       `json:"chunk_count"`

	// Retrieval metadata, moved by engagement reports and jobs.
	Confidence       float64   `json:"confidence"`
	UsageCount       int       `json:"usage_count"`
	LastUsed         time.Time `json:"last_used,omitzero"`
	SurfaceCount     int       `json:"surface_count"`
	LastSurfaced     time.Time `json:"last_surfaced,omitzero"`
	RecentDismissals float64   `json:"recent_dismissals"`
	// Learned are the words the memory became findable by through its uses (feedback
	// expansion): words of the messages it answered that it lacked, with their weights.
	Learned []LearnedTerm `json:"learned,omitempty"`
}

// LearnedTerm is one word a memory learned from being used in answer to a message that held
// it, beside words of the memory's own. Text search counts the word at Weight × 0.3 of an
// occurrence in the content.
type LearnedTerm struct {
	// Term is the word as the text index holds it: lower-case and stemmed ("painted" →
	// "paint").
	Term string `json:"term"`
	// Weight is +1 for each use that taught it, at most 3, halved for every 90 days without
	// one, as of At; under 0.05 the word is forgotten.
	Weight float64 `json:"weight"`
	// At is when the weight was last updated.
	At time.Time `json:"at"`
}

// MemoryPatch is the body of PATCH /v1/namespaces/{ns}/memories/{id}: a JSON merge patch
// (RFC 7396) of what may change in a stored memory. A field left out stays as it is; null
// returns it to its default: importance 0, valid_at the memory's created_at, invalid_at
// none (still true), sensitive false. The content, kind, source and lists never change: a
// memory with other content is a new memory (store it, and delete the old one).
type MemoryPatch struct {
	Importance *float64   `json:"importance,omitempty"`
	ValidAt    *time.Time `json:"valid_at,omitempty"`
	InvalidAt  *time.Time `json:"invalid_at,omitempty"`
	Sensitive  *bool      `json:"sensitive,omitempty"`
	// Clear lists the fields a client sends as null (back to their default): "importance",
	// "valid_at", "invalid_at", "sensitive". Servers read nulls into it.
	Clear []string `json:"-"`
}

// MemoryPatchFields are the fields a MemoryPatch may hold.
var MemoryPatchFields = []string{"importance", "valid_at", "invalid_at", "sensitive"}

// MarshalJSON writes the fields set, and null for each field in Clear.
func (p MemoryPatch) MarshalJSON() ([]byte, error) {
	out := map[string]any{}
	if p.Importance != nil {
		out["importance"] = *p.Importance
	}
	if p.ValidAt != nil {
		out["valid_at"] = *p.ValidAt
	}
	if p.InvalidAt != nil {
		out["invalid_at"] = *p.InvalidAt
	}
	if p.Sensitive != nil {
		out["sensitive"] = *p.Sensitive
	}
	for _, f := range p.Clear {
		out[f] = nil
	}
	return json.Marshal(out)
}
