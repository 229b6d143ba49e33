package nlp

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	porter "github.com/blevesearch/go-porterstemmer"
)

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Where are the bees kept?", []string{"bee", "kept"}},
		{"Nadia keeps her bees on the roof of the old cannery.", []string{"nadia", "keep", "bee", "roof", "old", "canneri"}},
		{"Caroline's adoption", []string{"carolin", "adopt"}},
		{"don't STOP running", []string{"stop", "run"}},
		{"", nil},
		{"\xff\xfe bad", []string{"bad"}},
	} {
		got := Terms(tc.in)
		if len(got) == 0 && len(tc.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestStemMemo: a memoized stem is the stemmer's, cold and warm, from goroutines at once,
// and for a token that is a slice of a longer text.
func TestStemMemo(t *testing.T) {
	words := strings.Fields("running runs ran caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky relational conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate formative formalize electriciti electrical hopeful goodness revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize probate rate cease controll roll")
	text := strings.Join(words, " ")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for pass := range 2 {
				for i, w := range words {
					tok := w
					if pass == 1 { // a slice of the joined text, as Tokens returns
						at := strings.Index(text, " "+w+" ")
						if at < 0 {
							continue
						}
						tok = text[at+1 : at+1+len(w)]
					}
					if got, want := Stem(tok), porter.StemString(w); got != want {
						t.Errorf("pass %d, word %d: Stem(%q) = %q, want %q", pass, i, w, got, want)
					}
				}
			}
		})
	}
	wg.Wait()
}
