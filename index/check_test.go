package index

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestCheckVectors: an answer of one finite vector of the right size per text passes,
// normalized in place (a unit vector bit for bit as given); too few vectors, a wrong size
// or a NaN component fail, naming the unit.
func TestCheckVectors(t *testing.T) {
	vecs := [][]float32{{3, 4}, {0, 1}}
	if err := CheckVectors(vecs, []string{"a", "b"}, 2); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vecs[0], []float32{0.6, 0.8}) || !slices.Equal(vecs[1], []float32{0, 1}) {
		t.Errorf("normalized %v, want [0.6 0.8] [0 1]", vecs)
	}
	for _, tc := range []struct {
		vecs [][]float32
		want string
	}{
		{[][]float32{{1, 0}}, "returned 1 vectors for 2 texts"},
		{[][]float32{{1, 0}, {1, 0, 0}}, "a 3-dimension vector for b, want 2"},
		{[][]float32{{float32(math.NaN()), 0}, {1, 0}}, "the vector of a"},
	} {
		if err := CheckVectors(tc.vecs, []string{"a", "b"}, 2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.vecs, err, tc.want)
		}
	}
}
