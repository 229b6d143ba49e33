package models

import (
	"context"
	"time"
)

// Hit is one search result of a store: an indexed unit (a memory, or a chunk of one) and its
// raw score (BM25 score, or cosine similarity). Hits are ordered best first.
type Hit struct {
	ID    string
	Score float64
	// Norm is, for a text hit, the query's information: the score of a unit of average
	// length holding each query term once, terms the namespace never saw included. Score/Norm
	// is the share of the query a match covers, the same scale in every turn; 0 when the
	// store does not measure it (Neo4j's full-text index).
	Norm float64
}

// MemoryWrite is one memory to create with everything ingest derived from it. Chunks (when
// the content was long) carry ParentID = Memory.ID. Concepts are upserted: an existing concept
// keeps its FirstSeen, gains Mentions and moves LastSeen. Edges are created when missing and
// left as they are when present (engagement, not ingest, moves weights). Embedder names the
// embedder that made the embeddings (embed.Embedder.Name): the namespace records it with its
// first vectors and refuses vectors of another; empty skips that check.
type MemoryWrite struct {
	Memory   *Memory
	Chunks   []*Memory
	Concepts []*Concept
	Edges    []*Edge
	Embedder string
}

// EmbedderIdentity is the embedder whose vectors a namespace holds: its Name
// (embed.Embedder.Name) and vector size. An empty Name is a namespace whose vectors were
// written before stores recorded names (embed.Resolve decides what made them).
type EmbedderIdentity struct {
	Name string
	Dims int
}

// Admit returns the identity of a namespace holding cur's vectors once a batch of b's
// vectors (Dims 0: none; Name "": not given) joins it: a namespace without vectors takes the
// batch's, one whose vectors predate recorded names takes the batch's name. EINVALID when
// the sizes or the names differ.
func (cur EmbedderIdentity) Admit(ns string, b EmbedderIdentity) (EmbedderIdentity, error) {
	switch {
	case b.Dims == 0:
	case cur.Dims == 0:
		return b, nil
	case cur.Dims != b.Dims:
		return cur, Invalid("embedding", "embedding has %d dimensions; namespace %s uses %d", b.Dims, ns, cur.Dims)
	case b.Name != "" && cur.Name != "" && cur.Name != b.Name:
		return cur, Invalid("embedding", "embedding made by %s; namespace %s holds vectors of %s", b.Name, ns, cur.Name)
	case b.Name != "" && cur.Name == "":
		return EmbedderIdentity{Name: b.Name, Dims: cur.Dims}, nil
	}
	return cur, nil
}

// SurfacingFilter selects surfacings. Zero fields do not filter.
type SurfacingFilter struct {
	Namespace      string
	ConversationID string
	TurnID         string // the surfacings of one turn (engagement's co_retrieved edges)
	MemoryID       string
	Since, Until   time.Time // on At, [Since, Until)
	NoOutcome      bool      // only those without any event yet
	Limit          int       // 0 = 1000
	Desc           bool      // newest first (default oldest first)
	// Brief asks only for what a reader of the whole log (the metrics) needs: Namespace,
	// ID, ConversationID, TurnID, MemoryID, Mode, ConvType, At, Outcome, LatencyMS, PUse
	// and Components.Confidence. A store may leave the other fields zero, sparing the
	// decoding of lists and JSON on tens of thousands of rows.
	Brief bool
}

// Check validates f as every store reads it and returns the number of surfacings it asks for.
func (f *SurfacingFilter) Check() (limit int, err error) {
	if f.Namespace != "" {
		if err := ValidateNamespace(f.Namespace); err != nil {
			return 0, err
		}
	}
	return defaultLimit(f.Limit, 1000)
}

// EventFilter selects engagement events. Zero fields do not filter.
type EventFilter struct {
	Namespace    string
	Since, Until time.Time
	// BySeq orders by Seq (the namespace's application order) instead of time; AfterSeq
	// keeps the events with a larger Seq.
	BySeq    bool
	AfterSeq int64
	Limit    int // 0 = all
}

// Check validates f as every store reads it.
func (f *EventFilter) Check() error {
	if f.Namespace != "" {
		if err := ValidateNamespace(f.Namespace); err != nil {
			return err
		}
	}
	return ValidateLimit(f.Limit)
}

// ValidateLimit checks the limit of a listing whose 0 stands for all rows (or a default).
func ValidateLimit(limit int) error {
	if limit < 0 {
		return Invalid("limit", "limit must not be negative")
	}
	return nil
}

// defaultLimit is limit, or def when limit is 0.
func defaultLimit(limit, def int) (int, error) {
	if limit == 0 {
		return def, nil
	}
	return limit, ValidateLimit(limit)
}

// EventTally is how many events of one type, implicit or not, matched a filter.
type EventTally struct {
	Type     EventType
	Implicit bool
	Count    int
}

// ResurfaceItem is a memory queued by the decay scan to come back into ambient recall.
type ResurfaceItem struct {
	Namespace string    `json:"namespace"`
	MemoryID  string    `json:"memory_id"`
	DueAt     time.Time `json:"due_at"`
	Score     float64   `json:"score"` // how overdue, policy-specific; higher first
	QueuedAt  time.Time `json:"queued_at"`
}

// JobRun is one run of a scheduled job.
type JobRun struct {
	ID       string    `json:"id"`
	Job      string    `json:"job"`
	Holder   string    `json:"holder"`
	Trigger  string    `json:"trigger"` // "cron" or "manual"
	Start    time.Time `json:"start"`
	End      time.Time `json:"end,omitzero"`
	Items    int       `json:"items"`
	Error    string    `json:"error,omitempty"`
	Finished bool      `json:"finished"` // false when interrupted; a checkpoint remains
}

// Tx is a store transaction for read-modify-write updates whose rules live outside the store
// (engagement, jobs). Every method works inside the one transaction; nothing is visible to
// other callers until Update returns nil.
type Tx interface {
	// GetMemory returns the memory; ENOTFOUND when missing.
	GetMemory(ns, id string) (*Memory, error)
	// PutMemory writes the retrieval metadata and schedule of an existing memory (content,
	// kind and times never change here); ENOTFOUND when missing.
	PutMemory(m *Memory) error
	// EditMemory writes what a client may change of an existing memory — its importance,
	// validity (ValidAt, InvalidAt) and sensitivity — to the memory and to each of its
	// chunks, which carry copies; EINVALID for a chunk's id, ENOTFOUND when missing.
	EditMemory(m *Memory) error
	// GetEdge returns the edge; ENOTFOUND when missing.
	GetEdge(ns string, k EdgeKey) (*Edge, error)
	// PutEdge creates or replaces the edge.
	PutEdge(e *Edge) error
	// GetSurfacing returns the surfacing; ENOTFOUND when missing.
	GetSurfacing(ns, id string) (*Surfacing, error)
	// PutSurfacing replaces an existing surfacing (to record its outcome).
	PutSurfacing(s *Surfacing) error
	// FindSurfacings lists surfacings matching f as Store.FindSurfacings does, seeing the
	// transaction's own writes (engagement finds the other surfacings of a turn that were
	// already used, to strengthen co_retrieved edges without losing a concurrent report).
	FindSurfacings(f SurfacingFilter) ([]*Surfacing, error)
	// InsertEvent appends an event to the log and sets e.Seq to its position in the
	// namespace's log (the previous event's Seq + 1); EDUPLICATE when an event with its id
	// exists in the namespace (the caller treats that as an idempotent replay).
	InsertEvent(e *Event) error
	// GetEvent returns the logged event with id in namespace ns, seeing the transaction's
	// own inserts; ENOTFOUND when there is none (engagement tells a replay of an event from
	// its id reused for another).
	GetEvent(ns, id string) (*Event, error)
	// GetState and SetState are Store.GetState and SetState inside the transaction
	// (engagement keeps the relevance model there, updated with the events; the threshold
	// bandit keeps its posteriors there, updated with each turn's reward).
	GetState(key string) (string, error)
	SetState(key, value string) error
	// GetDecision returns the decision of a turn; ENOTFOUND when missing.
	GetDecision(ns, turnID string) (*Decision, error)
	// PutDecision creates or replaces the decision of a turn (by namespace and turn id).
	PutDecision(d *Decision) error
}

// PhraseIndex is a Store that answers recall's phrase check from its text index: for each
// of ids (indexed units), the share of pairs — distinct pairs of adjacent terms of the
// query, analysed as SearchText analyses text — that are adjacent terms of the unit's
// content too; found[i] is false for an id the index does not hold. Recall analyses the
// content itself with a store that is not one, or for an id not found.
type PhraseIndex interface {
	Phrases(ctx context.Context, ns string, pairs [][2]string, ids []string) (shares []float64, found []bool, err error)
}

// EmbedFunc embeds texts, one vector per text, in order (embed.Embedder.Embed): what a
// store's re-embedding (sqlite.Store.Reembed, neo4j.Store.Reembed) calls. An alias, so a
// plain function of this shape is one, and both stores' Reembed have one type.
type EmbedFunc = func(ctx context.Context, texts []string) ([][]float32, error)

// Store is the contract every store implements; store/storetest checks it. Namespaces are
// fully isolated: no method ever returns an object of another namespace. Unless stated
// otherwise, a missing object is ENOTFOUND, bad arguments are EINVALID, and anything else
// is EINTERNAL.
type Store interface {
	// CreateMemories writes the batch atomically: all memories, chunks, concepts and edges,
	// or none. Every acknowledged write is durable. ECONFLICT when an id exists; EINVALID
	// when the embeddings' size, or their Embedder when both are named, differs from the
	// namespace's (the first vectors of a namespace record both).
	CreateMemories(ctx context.Context, writes []*MemoryWrite) error
	// GetMemory returns one memory or chunk; ENOTFOUND when missing.
	GetMemory(ctx context.Context, ns, id string) (*Memory, error)
	// GetMemories returns the memories and chunks with these ids, in the order asked,
	// skipping missing ones.
	GetMemories(ctx context.Context, ns string, ids []string) ([]*Memory, error)
	// ViewMemories is GetMemories for a caller that only reads, on a hot path (recall
	// ranks about a hundred memories a call and returns ten): the memories, and everything
	// they point to, may be shared with the store and other callers and must not be
	// modified; Embedding is nil unless vectors is true. Otherwise they are what GetMemories
	// returns, in the order asked, skipping missing ones.
	ViewMemories(ctx context.Context, ns string, ids []string, vectors bool) ([]*Memory, error)
	// FindMemories lists memories (never chunks) matching f and the total that match
	// ignoring Offset and Limit.
	FindMemories(ctx context.Context, f MemoryFilter) ([]*Memory, int, error)
	// DeleteMemory removes a memory with its chunks, vectors, edges, index entries,
	// surfacings' queue items; ENOTFOUND when missing.
	DeleteMemory(ctx context.Context, ns, id string) error
	// LastInConversation returns the newest memory (not chunk) of a conversation, by
	// CreatedAt then id; ENOTFOUND when there is none.
	LastInConversation(ctx context.Context, ns, conversationID string) (*Memory, error)

	// SearchText returns the top k indexed units by BM25 over their content, analysed with
	// nlp.Terms. Empty when the query has no terms.
	SearchText(ctx context.Context, ns, query string, k int) ([]Hit, error)
	// SearchVector returns the top k indexed units by cosine similarity to vec.
	SearchVector(ctx context.Context, ns string, vec []float32, k int) ([]Hit, error)

	// Neighbors returns every edge touching any of the node ids, in either direction.
	Neighbors(ctx context.Context, ns string, ids []string) ([]*Edge, error)
	// StrongestNeighbors is Neighbors bounded for hot paths: for each node id, at most
	// perNode of the edges touching it whose type is in types (empty = every type), the
	// strongest first (by weight; equal weights keep Neighbors' order). An edge touching two
	// of the ids is returned once. A hub's thousands of edges cost a scan, not a copy.
	StrongestNeighbors(ctx context.Context, ns string, ids []string, perNode int, types []EdgeType) ([]*Edge, error)
	// GetConcepts returns the concepts with these normalized names that exist.
	GetConcepts(ctx context.Context, ns string, names []string) ([]*Concept, error)
	// ScanEdges returns up to limit edges of the namespace ordered by key, after the key
	// given (zero key: from the start); for jobs that walk every edge in batches.
	ScanEdges(ctx context.Context, ns string, after EdgeKey, limit int) ([]*Edge, error)
	// GraphStats returns the number of nodes and edges of the namespace's graph.
	GraphStats(ctx context.Context, ns string) (nodes, edges int, err error)
	// GraphVersion returns a value that changes whenever a write changes the namespace's
	// edges, for caching what is computed from them: read it before the edges. ok is false
	// when the store keeps no such version (then nothing may be cached).
	GraphVersion(ctx context.Context, ns string) (v uint64, ok bool, err error)
	// Namespaces lists the namespaces that hold any memory.
	Namespaces(ctx context.Context) ([]string, error)

	// RecordSurfacings stores the surfacings of one turn and the conversation's new state
	// (state may be nil) atomically, and counts each surfacing on its memory:
	// SurfaceCount + 1, LastSurfaced = the latest of its own and the surfacing's At (a missing
	// memory is skipped).
	RecordSurfacings(ctx context.Context, ss []*Surfacing, state *ConversationState) error
	// GetSurfacing returns one surfacing; ENOTFOUND when missing.
	GetSurfacing(ctx context.Context, ns, id string) (*Surfacing, error)
	// FindSurfacings lists surfacings matching f, oldest first unless f.Desc.
	FindSurfacings(ctx context.Context, f SurfacingFilter) ([]*Surfacing, error)
	// GetConversation returns a conversation's state; ENOTFOUND when none was recorded.
	GetConversation(ctx context.Context, ns, id string) (*ConversationState, error)

	// Update runs fn in one transaction and commits when it returns nil. Updates are
	// serializable: concurrent callers never lose each other's writes.
	Update(ctx context.Context, fn func(tx Tx) error) error
	// FindEvents lists engagement events matching f, oldest first: by time, or with f.BySeq
	// in application order (Seq).
	FindEvents(ctx context.Context, f EventFilter) ([]*Event, error)
	// CountEvents counts the events matching f (its order and Limit aside) by type and
	// Implicit, ordered by type then Implicit (false first); a pair with no events is absent.
	CountEvents(ctx context.Context, f EventFilter) ([]EventTally, error)
	// FindDecisions lists the threshold decisions matching f, oldest first (by At, then turn
	// id), or newest first with f.Desc; EINVALID without a namespace. Decisions are written through Update (Tx.PutDecision).
	FindDecisions(ctx context.Context, f DecisionFilter) ([]*Decision, error)

	// Enqueue adds or replaces resurfacing queue items (one per memory).
	Enqueue(ctx context.Context, items []*ResurfaceItem) error
	// Queue lists a namespace's queue, highest score first, at most limit (0 = all).
	Queue(ctx context.Context, ns string, limit int) ([]*ResurfaceItem, error)
	// Dequeue removes these memories from the queue; missing ones are ignored.
	Dequeue(ctx context.Context, ns string, memoryIDs []string) error

	// AcquireLease takes or renews the named lease for holder until now+ttl. It succeeds when
	// the lease is free, expired, or already held by holder; it reports false, nil when another
	// holder has it.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration, now time.Time) (bool, error)
	// ReleaseLease frees the lease if holder has it.
	ReleaseLease(ctx context.Context, name, holder string) error
	// RecordJobRun creates or replaces a job run (by ID).
	RecordJobRun(ctx context.Context, run *JobRun) error
	// FindJobRuns lists the newest runs of a job ("" = all jobs), newest first.
	FindJobRuns(ctx context.Context, job string, limit int) ([]*JobRun, error)
	// GetState and SetState keep small opaque values for jobs (checkpoints, cursors) and
	// settings; GetState returns "" and no error for a missing key.
	GetState(ctx context.Context, key string) (string, error)
	SetState(ctx context.Context, key, value string) error

	// PruneHistory deletes the turn history older than the cut (each namespace's cutoff,
	// PruneCut.For; job runs by cut.Before) that the pruning rule lets go (SurfacingAge and
	// the other ages' Prunable), and returns how much of it went. EINVALID when the cut
	// deletes nothing anywhere. It works in short transactions, so recall and engagement go
	// on meanwhile, and may be called again after an error or a cancelled ctx: what it
	// deleted stays deleted, and nothing else is touched.
	PruneHistory(ctx context.Context, cut PruneCut) (Pruned, error)
	// DeleteNamespace deletes everything the store holds of namespace ns: its memories with
	// their chunks, vectors, edges and concepts, its surfacings, events, decisions,
	// conversations, resurfacing queue and experiments, the state keys it owns
	// (NamespaceOwnsKey), and the namespace itself, which may then be created anew (with
	// another embedding size, say). It works in short transactions, so other namespaces go
	// on meanwhile; interrupted, it leaves ns partly deleted and a second call finishes it.
	// An unknown namespace deletes nothing and is no error. Rows that calls racing with it
	// write to ns may stay.
	DeleteNamespace(ctx context.Context, ns string) (NamespaceDeleted, error)

	// Experiments (experiment.go).
	ExperimentStore

	// Close releases the store.
	Close() error
}

// TurnReader is a Store that makes the reads a recall turn begins with in one call, where
// calling the methods one by one waits for each in turn: a remote store (Neo4j) overlaps
// them or folds them into one query, so the turn pays about one round trip for all of them.
// Each answer, its error included, is what the Store method of the same name returns for the
// same arguments; recall takes them from TurnReads in place of those calls.
type TurnReader interface {
	ReadTurn(ctx context.Context, q *TurnQuery) *TurnReads
}

// TurnQuery names the reads of ReadTurn, all in one namespace. A zero field skips its read.
type TurnQuery struct {
	Namespace      string
	ConversationID string    // GetConversation
	StateKeys      []string  // GetState of each
	Texts          []string  // SearchText of each, top TextK
	TextK          int       //
	Vector         []float32 // SearchVector, top VectorK
	VectorK        int       //
	Concepts       []string  // GetConcepts
	// ConceptFanout, with Concepts, also reads for each concept found the edges
	// StrongestNeighbors(ns, [its node], ConceptFanout, every type) returns.
	ConceptFanout int
	GraphStats    bool // GraphStats
}

// TurnReads are ReadTurn's answers, in the order of the TurnQuery's lists.
type TurnReads struct {
	Conversation    *ConversationState
	ConversationErr error
	States          []string
	StateErrs       []error
	Texts           [][]Hit
	TextErrs        []error
	Vector          []Hit
	VectorErr       error
	Concepts        []*Concept
	ConceptsErr     error
	// ConceptEdges holds each found concept's edges by its node id (ConceptID); nil with an
	// error in ConceptEdgesErr.
	ConceptEdges    map[string][]*Edge
	ConceptEdgesErr error
	Nodes, Edges    int
	GraphStatsErr   error
}

// GetMemory is Store.GetMemory over a store's GetMemories, so both stores check and answer
// alike: the memory or chunk id of namespace ns, ENOTFOUND when missing.
func GetMemory(ctx context.Context, getMemories func(context.Context, string, []string) ([]*Memory, error), ns, id string) (*Memory, error) {
	if err := ValidateKey(ns, id, "id"); err != nil {
		return nil, err
	}
	ms, err := getMemories(ctx, ns, []string{id})
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, Errorf(ENOTFOUND, "memory %s not found", id)
	}
	return ms[0], nil
}
