// Package recall is the retrieval pipeline: intake, candidates from text, vector and graph,
// rank fusion, scoring, filters, chunk collapse, diversity, thresholds, budget, and the
// record of what was surfaced.
package recall

import (
	"context"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/models"
)

// Pipeline runs recall over a store.
type Pipeline struct {
	store    models.Store
	embedder embed.Embedder
	opts     Options
}

// Options tune the pipeline; zero values take the defaults.
type Options struct{}

// New returns a pipeline over store using embedder for query vectors (nil: text and graph only).
func New(store models.Store, embedder embed.Embedder, opts Options) *Pipeline {
	return &Pipeline{store: store, embedder: embedder, opts: opts}
}

// Recall answers one recall request.
func (p *Pipeline) Recall(ctx context.Context, req *Request) (*Response, error) {
	return nil, models.Errorf(models.EUNAVAILABLE, "recall not implemented yet")
}
