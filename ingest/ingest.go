// Package ingest turns submitted memories into store writes: validation, ids and times,
// chunking, concept extraction, graph edges and embeddings.
package ingest

import (
	"context"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/models"
)

// Service ingests memories into a store.
type Service struct {
	store    models.Store
	embedder embed.Embedder
}

// New returns an ingest service.
func New(store models.Store, embedder embed.Embedder) *Service {
	return &Service{store: store, embedder: embedder}
}

// Ingest validates every memory of the batch (nothing is written if any is invalid; the
// error names "items[i].field"), assigns ids and times (now when CreatedAt is zero), and
// writes the batch atomically. It returns the created memories (parents, not chunks).
func (s *Service) Ingest(ctx context.Context, ns string, ms []*models.Memory) ([]*models.Memory, error) {
	return nil, models.Errorf(models.EUNAVAILABLE, "ingest not implemented yet")
}
