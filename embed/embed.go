// Package embed turns text into vectors: an OpenAI-compatible client for any /v1/embeddings
// server, and a local deterministic default that needs no model and no network.
package embed

import "context"

// Embedder maps texts to L2-normalized vectors of Dims() dimensions, one per text, in order.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dims() int
	// Name identifies the model, so a store can tell when its vectors came from another one.
	Name() string
}
