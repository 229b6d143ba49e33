package recall

import (
	"slices"

	"github.com/salience-ai/salience/nlp"
)

// explainLearned gives each result the learned words of its memory (feedback expansion) that
// the turn's text holds, as the text index matched them: without them, a memory found by
// words it learned from earlier uses would look found by nothing.
func explainLearned(text string, results []Result) {
	var words []string
	for i := range results {
		r := &results[i]
		if r.Memory == nil || len(r.Memory.Learned) == 0 {
			continue
		}
		if words == nil {
			words = nlp.Terms(text)
		}
		for _, lt := range r.Memory.Learned {
			if slices.Contains(words, lt.Term) {
				r.Learned = append(r.Learned, lt)
			}
		}
	}
}
