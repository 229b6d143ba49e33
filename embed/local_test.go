package embed

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func norm(v []float32) float64 { return math.Sqrt(cosine(v, v)) }

func embedOne(t testing.TB, e Embedder, text string) []float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

func TestLocalNameAndDims(t *testing.T) {
	for _, tc := range []struct {
		dims, wantDims int
		wantName       string
	}{
		{0, 256, "local-hash-v1-256"},
		{-3, 256, "local-hash-v1-256"},
		{64, 64, "local-hash-v1-64"},
	} {
		l := NewLocal(tc.dims)
		if l.Dims() != tc.wantDims || l.Name() != tc.wantName {
			t.Errorf("NewLocal(%d): Dims %d Name %q, want %d %q", tc.dims, l.Dims(), l.Name(), tc.wantDims, tc.wantName)
		}
		if v := embedOne(t, l, "bees on the roof"); len(v) != tc.wantDims {
			t.Errorf("NewLocal(%d) vector has %d dims, want %d", tc.dims, len(v), tc.wantDims)
		}
	}
}

func TestLocalSimilarity(t *testing.T) {
	l := NewLocal(0)
	for _, tc := range []struct {
		anchor, similar, unrelated string
	}{
		{"Where does Nadia keep her bees?", "Nadia keeps her bees on the roof of the old cannery.", "The quarterly tax report is due on Friday."},
		{"I went to an LGBTQ support group yesterday", "the support group for LGBTQ people was powerful", "we baked sourdough bread with rye flour"},
		// Character n-grams relate forms the stemmer keeps apart.
		{"adoption agencies", "she wants to adopt a child through an agency", "my violin needs new strings"},
		{"painting a sunrise over the lake", "she painted the lake at sunrise", "debugging a nil pointer in the server"},
	} {
		a, s, u := embedOne(t, l, tc.anchor), embedOne(t, l, tc.similar), embedOne(t, l, tc.unrelated)
		cs, cu := cosine(a, s), cosine(a, u)
		if cs <= cu {
			t.Errorf("cos(%q, similar) = %.3f not above cos(unrelated) = %.3f", tc.anchor, cs, cu)
		}
		if cs < 0.2 {
			t.Errorf("cos(%q, %q) = %.3f, want ≥ 0.2", tc.anchor, tc.similar, cs)
		}
		if math.Abs(cu) > 0.2 {
			t.Errorf("cos(%q, %q) = %.3f, want near 0", tc.anchor, tc.unrelated, cu)
		}
	}
	// More shared words, higher cosine: an ordering, not just a pair.
	q := embedOne(t, l, "red wooden boat on the lake")
	c3 := cosine(q, embedOne(t, l, "a red wooden boat"))
	c2 := cosine(q, embedOne(t, l, "a wooden boat"))
	c1 := cosine(q, embedOne(t, l, "a boat"))
	if !(c3 > c2 && c2 > c1 && c1 > 0) {
		t.Errorf("cosines %.3f, %.3f, %.3f are not strictly decreasing with fewer shared words", c3, c2, c1)
	}
}

func TestLocalDeterministicAndNormalized(t *testing.T) {
	texts := []string{
		"Caroline went to the LGBTQ support group.",
		"¿Dónde está la biblioteca? Ünïcödé wörds ça va",
		strings.Repeat("long text with repeated words ", 200),
		"x",
	}
	a, err := NewLocal(0).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewLocal(0).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		for k := range a[i] {
			if a[i][k] != b[i][k] {
				t.Fatalf("text %d dim %d: %v then %v", i, k, a[i][k], b[i][k])
			}
		}
		if n := norm(a[i]); math.Abs(n-1) > 1e-6 {
			t.Errorf("text %d has norm %.9f, want 1", i, n)
		}
	}
	// Embedding a text alone or in a batch gives the same vector.
	alone := embedOne(t, NewLocal(0), texts[1])
	for k := range alone {
		if alone[k] != a[1][k] {
			t.Fatalf("dim %d differs alone (%v) and in a batch (%v)", k, alone[k], a[1][k])
		}
	}
}

func TestLocalEmptyIsZero(t *testing.T) {
	l := NewLocal(32)
	vs, err := l.Embed(context.Background(), []string{"", "   ", "the and of it", "?!..."})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if len(v) != 32 || norm(v) != 0 {
			t.Errorf("text %d: len %d norm %v, want the 32-dim zero vector", i, len(v), norm(v))
		}
	}
}

func TestLocalCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewLocal(0).Embed(ctx, []string{"a"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func BenchmarkLocalEmbed(b *testing.B) {
	text := "Caroline went to the LGBTQ support group yesterday and said it was powerful; " +
		"Melanie painted a sunrise over the lake last year, and the kids want to go camping " +
		"in the mountains with their dog next month."
	text = text[:200]
	l := NewLocal(0)
	ctx := context.Background()
	in := []string{text}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Embed(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}
