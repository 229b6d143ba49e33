package rerank

import (
	"errors"
	"testing"
)

// FuzzParseRanking feeds arbitrary model answers to the parser: it must never panic, and
// whatever it accepts must be a permutation of the candidates; anything else is errAnswer.
func FuzzParseRanking(f *testing.F) {
	for _, s := range []string{
		`{"ranking": ["m2", "m1", "m3"]}`,
		"```json\n{\"ranking\": [\"m1\"]}\n```",
		`{"ranking": ["m1", "m1"]}`,
		`{"ranking": ["m99999999999999999999"]}`,
		`{"ranking": null}`,
		`[]`,
		"```",
		"",
	} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, answer string, n int) {
		if n < 0 || n > 200 {
			return
		}
		order, err := parseRanking(answer, n)
		if err != nil {
			if !errors.Is(err, errAnswer) {
				t.Fatalf("error %v is not errAnswer", err)
			}
			return
		}
		if len(order) != n {
			t.Fatalf("accepted %d of %d", len(order), n)
		}
		seen := make([]bool, n)
		for _, i := range order {
			if i < 0 || i >= n || seen[i] {
				t.Fatalf("accepted a non-permutation %v", order)
			}
			seen[i] = true
		}
	})
}
