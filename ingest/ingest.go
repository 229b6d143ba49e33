// Package ingest turns submitted memories into store writes: validation, ids and times,
// chunking, concept extraction, graph edges and embeddings (docs/design.md#ingest).
package ingest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// Edge weights given at ingest. They are deliberately below the 0.5 activation an
// associative-only candidate needs (docs/design.md#candidates): one shared keyword is not an
// association, two are ("multiple semantic paths"), and engagement strengthens the ones
// that prove useful.
const (
	WeightMention  = 0.3 // memory → topic it mentions
	WeightEntity   = 0.4 // memory → entity it names
	WeightDeclared = 0.5 // memory → concept, domain or trigger the client declared
	WeightTemporal = 0.3 // memory → next memory of its conversation
	WeightRelation = 0.6 // subject → object of a fact's triple
	maxConcepts    = 16  // extracted concepts per memory
	maxPhrases     = 400 // candidate phrases looked up as known concepts
)

// Options tune ingest; zero values take the defaults.
type Options struct {
	MaxContentBytes int              // per memory; 0 = models.MaxContentBytes
	Now             func() time.Time // nil = time.Now
}

// Service ingests memories into a store.
type Service struct {
	store    models.Store
	embedder embed.Embedder
	opts     Options
}

// New returns an ingest service. embedder may be nil (no vectors are stored).
func New(store models.Store, embedder embed.Embedder, opts ...Options) *Service {
	s := &Service{store: store, embedder: embedder}
	if len(opts) > 0 {
		s.opts = opts[0]
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	return s
}

// Validate checks a batch as Ingest would, without writing. Fields of a batch are named
// "memories[i].field"; a single memory's fields are named plainly.
func (s *Service) Validate(ns string, ms []*models.Memory) error {
	if err := models.ValidateNamespace(ns); err != nil {
		return err
	}
	if len(ms) == 0 {
		return models.Invalid("memories", "no memories given")
	}
	if len(ms) > models.MaxBatch {
		return models.Invalid("memories", "%d memories in one batch, over the limit of %d", len(ms), models.MaxBatch)
	}
	for i, m := range ms {
		if m == nil {
			return models.Invalid(fmt.Sprintf("memories[%d]", i), "memory is null")
		}
		err := m.Validate(s.opts.MaxContentBytes)
		if err == nil {
			err = validateTimes(m)
		}
		if err != nil {
			if len(ms) > 1 {
				return models.WithFieldPrefix(err, fmt.Sprintf("memories[%d].", i))
			}
			return err
		}
	}
	return nil
}

// The range of a memory's times. Every store must hold them: the SQLite store keeps times as
// int64 nanoseconds since 1970, which reach from September 1677 to April 2262; the bounds are
// the whole years inside that. Dates before 1970 are welcome (a historic document): a
// memory's id only orders, and ids.New clamps what a ULID cannot hold.
var (
	MinTime = time.Date(1678, 1, 1, 0, 0, 0, 0, time.UTC) // inclusive
	MaxTime = time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC) // exclusive
)

// validateTimes checks that the times a client gave lie in [MinTime, MaxTime). A zero time
// means "not given" here; the server rejects an explicit 0001-01-01T00:00:00Z before ingest,
// so zero never stands for a date a client meant.
func validateTimes(m *models.Memory) error {
	for _, f := range []struct {
		name string
		t    time.Time
	}{{"created_at", m.CreatedAt}, {"valid_at", m.ValidAt}, {"invalid_at", m.InvalidAt}} {
		if !f.t.IsZero() && (f.t.Before(MinTime) || !f.t.Before(MaxTime)) {
			return models.Invalid(f.name, "%s %s is out of range: times must lie from %s up to %s",
				f.name, f.t.Format(time.RFC3339), MinTime.Format(time.DateOnly), MaxTime.Format(time.DateOnly))
		}
	}
	return nil
}

// Ingest validates every memory of the batch (nothing is written if any is invalid),
// assigns ids and times (now when CreatedAt is zero), chunks long content, extracts
// concepts, links consecutive memories of a conversation, embeds the indexed text and
// writes the batch atomically. It returns the created memories (parents, not chunks),
// without embeddings.
func (s *Service) Ingest(ctx context.Context, ns string, ms []*models.Memory) ([]*models.Memory, error) {
	if err := s.Validate(ns, ms); err != nil {
		return nil, err
	}
	now := s.opts.Now().UTC()

	writes := make([]*models.MemoryWrite, len(ms))
	var units []*models.Memory // what gets embedded: chunks, or memories that were not chunked
	for i, in := range ms {
		m := prepare(ns, in, now)
		w := &models.MemoryWrite{Memory: m}
		if spans := chunks(m.Content); len(spans) > 1 {
			m.ChunkCount = len(spans)
			for j, sp := range spans {
				c := *m
				c.ID = ids.Chunk(m.ID, j)
				c.Content = sp.Text
				c.ParentID = m.ID
				c.ChunkIndex = j
				c.ChunkCount = 0 // the parent holds the count
				c.Domains, c.Triggers, c.Concepts, c.Triple = nil, nil, nil, nil
				w.Chunks = append(w.Chunks, &c)
				units = append(units, &c)
			}
		} else {
			units = append(units, m)
		}
		writes[i] = w
	}

	if err := s.link(ctx, ns, writes, now); err != nil {
		return nil, err
	}
	if err := s.embed(ctx, units); err != nil {
		return nil, err
	}
	if s.embedder != nil {
		for _, w := range writes { // the namespace records, and then checks, who made its vectors
			w.Embedder = s.embedder.Name()
		}
	}
	if err := s.store.CreateMemories(ctx, writes); err != nil {
		return nil, storeField(err, len(ms) > 1)
	}
	out := make([]*models.Memory, len(writes))
	for i, w := range writes {
		c := *w.Memory
		c.Embedding = nil
		out[i] = &c
	}
	return out, nil
}

// errEmbedder is what a client reads when the embedder fails.
var errEmbedder = &models.Error{Code: models.EUNAVAILABLE, Message: "the embedder is unavailable; retry shortly", Safe: true}

// storeRE matches the field paths the store names in the writes it is given:
// "writes[3].memory.created_at", "writes[3].chunks[0].content".
var storeRE = regexp.MustCompile(`^writes\[(\d+)\]\.(?:memory|chunks\[\d+\])(?:\.(.*))?$`)

// storeField renames a field of a store error from the store's write structure to the
// client's request ("writes[3].memory.created_at" → "memories[3].created_at"; a single
// memory's plainly, "created_at"). Ingest validates everything the store checks, so this is
// a safety net: a client must never read the store's internal paths. A chunk's field is
// the memory's content, which the chunk was cut from.
func storeField(err error, batch bool) error {
	f := models.ErrorField(err)
	sm := storeRE.FindStringSubmatch(f)
	if sm == nil {
		return err
	}
	var me *models.Error
	if !errors.As(err, &me) {
		return err
	}
	name := sm[2]
	if strings.Contains(f, ".chunks[") {
		name = "content"
	}
	c := *me
	c.Field = name
	if batch {
		c.Field = strings.TrimSuffix("memories["+sm[1]+"]."+name, ".")
	}
	return &c
}

// prepare copies a submitted memory and fills in what the server assigns.
func prepare(ns string, in *models.Memory, now time.Time) *models.Memory {
	m := &models.Memory{
		Namespace:  ns,
		Kind:       in.Kind,
		Content:    in.Content,
		CreatedAt:  in.CreatedAt.UTC(),
		ValidAt:    utc(in.ValidAt),
		InvalidAt:  utc(in.InvalidAt),
		Source:     in.Source,
		Importance: in.Importance,
		Domains:    clean(in.Domains),
		Triggers:   clean(in.Triggers),
		Concepts:   clean(in.Concepts),
		Triple:     in.Triple,
		Sensitive:  in.Sensitive,
		Confidence: models.DefaultConfidence,
	}
	if in.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	m.ID = ids.New(m.CreatedAt)
	return m
}

func clean(vals []string) []string {
	if len(vals) == 0 {
		return nil
	}
	out := make([]string, 0, len(vals))
	seen := map[string]bool{}
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// chunks splits content longer than the threshold (docs/design.md#ingest, seed: WhisperEngine).
func chunks(content string) []nlp.Span {
	if len([]rune(content)) <= nlp.ChunkThreshold {
		return nil
	}
	return nlp.Chunk(content, nlp.ChunkSize, nlp.ChunkOverlap)
}

// embed fills the Embedding of every indexed unit.
func (s *Service) embed(ctx context.Context, units []*models.Memory) error {
	if s.embedder == nil || len(units) == 0 {
		return nil
	}
	texts := make([]string, len(units))
	for i, u := range units {
		texts[i] = u.Content
	}
	vecs, err := s.embedder.Embed(ctx, texts)
	if err != nil {
		// The cause names the embedder's address and its error text: it goes to the log
		// (wrapped), never into the message a client reads.
		return fmt.Errorf("ingest: embedding %d texts: %w: %w", len(texts), errEmbedder, err)
	}
	if len(vecs) != len(units) {
		return fmt.Errorf("ingest: the embedder returned %d vectors for %d texts: %w", len(vecs), len(units), errEmbedder)
	}
	for i, u := range units {
		u.Embedding = vecs[i]
	}
	return nil
}
