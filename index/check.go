package index

import "fmt"

// CheckVectors checks an embedder's answer for the texts of the units ids as a store keeps
// it: one vector per text, each of dims dimensions and finite. It normalizes the vectors in
// place (Normalize: the stores keep unit vectors, as CreateMemories does). Both stores'
// re-embedding use it.
func CheckVectors(vecs [][]float32, ids []string, dims int) error {
	if len(vecs) != len(ids) {
		return fmt.Errorf("the embedder returned %d vectors for %d texts", len(vecs), len(ids))
	}
	for i, v := range vecs {
		if len(v) != dims {
			return fmt.Errorf("the embedder returned a %d-dimension vector for %s, want %d", len(v), ids[i], dims)
		}
		n, err := Normalize(v)
		if err != nil {
			return fmt.Errorf("the vector of %s: %w", ids[i], err)
		}
		vecs[i] = n
	}
	return nil
}
