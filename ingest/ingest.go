// Package ingest turns submitted memories into store writes: validation, ids and times,
// chunking, concept extraction, graph edges and embeddings (DESIGN.md §3).
package ingest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// Edge weights given at ingest. They are deliberately below the 0.5 activation an
// associative-only candidate needs (DESIGN.md §4.2): one shared keyword is not an
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
		if err := m.Validate(s.opts.MaxContentBytes); err != nil {
			if len(ms) > 1 {
				return models.WithFieldPrefix(err, fmt.Sprintf("memories[%d].", i))
			}
			return err
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
	if err := s.store.CreateMemories(ctx, writes); err != nil {
		return nil, err
	}
	out := make([]*models.Memory, len(writes))
	for i, w := range writes {
		c := *w.Memory
		c.Embedding = nil
		out[i] = &c
	}
	return out, nil
}

// prepare copies a submitted memory and fills in what the server assigns.
func prepare(ns string, in *models.Memory, now time.Time) *models.Memory {
	m := &models.Memory{
		Namespace:  ns,
		Kind:       in.Kind,
		Content:    in.Content,
		CreatedAt:  in.CreatedAt.UTC(),
		ValidAt:    in.ValidAt.UTC(),
		InvalidAt:  in.InvalidAt.UTC(),
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
	if in.ValidAt.IsZero() {
		m.ValidAt = time.Time{}
	}
	if in.InvalidAt.IsZero() {
		m.InvalidAt = time.Time{}
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

// chunks splits content longer than the threshold (DESIGN.md §3, seed: WhisperEngine).
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
		return models.Errorf(models.EUNAVAILABLE, "embedder failed: %v", err)
	}
	if len(vecs) != len(units) {
		return models.Errorf(models.EUNAVAILABLE, "embedder returned %d vectors for %d texts", len(vecs), len(units))
	}
	for i, u := range units {
		u.Embedding = vecs[i]
	}
	return nil
}
