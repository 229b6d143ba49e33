package embed

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// Concat puts several embedders' vectors side by side, each scaled by its weight, and
// L2-normalizes the whole: the cosine of two Concat vectors is the weighted mean of the
// parts' cosines (weights squared, over their sum), so one index ranks by both signals.
type Concat struct {
	parts   []Embedder
	weights []float64
	dims    int
}

// NewConcat returns the concatenation of parts with the given weights (same length, > 0).
func NewConcat(parts []Embedder, weights []float64) (*Concat, error) {
	if len(parts) == 0 || len(parts) != len(weights) {
		return nil, fmt.Errorf("embed: concat: %d parts and %d weights", len(parts), len(weights))
	}
	c := &Concat{parts: parts, weights: weights}
	for i, p := range parts {
		if !(weights[i] > 0) {
			return nil, fmt.Errorf("embed: concat: weight %v of %s must be positive", weights[i], p.Name())
		}
		c.dims += p.Dims()
	}
	return c, nil
}

// Dims is the sum of the parts' sizes.
func (c *Concat) Dims() int { return c.dims }

// Name lists the parts and weights, e.g. "concat(static-…:0.8,local-256:0.6)".
func (c *Concat) Name() string {
	names := make([]string, len(c.parts))
	for i, p := range c.parts {
		names[i] = fmt.Sprintf("%s:%g", p.Name(), c.weights[i])
	}
	return "concat(" + strings.Join(names, ",") + ")"
}

// Embed embeds texts with every part and joins the vectors.
func (c *Concat) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, 0, c.dims)
	}
	for pi, p := range c.parts {
		vs, err := p.Embed(ctx, texts)
		if err != nil {
			return nil, err
		}
		w := float32(c.weights[pi])
		for i, v := range vs {
			for _, x := range v {
				out[i] = append(out[i], w*x)
			}
		}
	}
	for _, v := range out {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n > 0 {
			inv := float32(1 / math.Sqrt(n))
			for j := range v {
				v[j] *= inv
			}
		}
	}
	return out, nil
}
