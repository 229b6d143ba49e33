// Package embed turns text into vectors: the static default (a token table distilled from a
// sentence model, built in: semantic, no model server), the lexical local embedder (hashed
// words and n-grams), and an OpenAI-compatible client for any /v1/embeddings server.
package embed

import "context"

// Embedder maps texts to L2-normalized vectors of Dims() dimensions, one per text, in order.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Dims() int
	// Name identifies the model, so a store can tell when its vectors came from another one.
	Name() string
}
