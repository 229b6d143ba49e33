package nlp

import (
	"fmt"
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

// TestStemMemoPublishes: stems reach the lock-free published map when they recur (the first
// one found in fresh, then once fresh hits reach an eighth of the published count) or pile
// up (a quarter of the published count, stemsPublish at least); a full memo keeps nothing
// more and still answers what it holds.
func TestStemMemoPublishes(t *testing.T) {
	var m stemMemo
	published := func() int {
		if p := m.published.Load(); p != nil {
			return len(*p)
		}
		return 0
	}
	m.add("running", "run")
	if s, ok := m.lookup("running"); !ok || s != "run" {
		t.Fatalf("lookup(running) = %q, %v", s, ok)
	}
	if published() != 1 || len(m.fresh) != 0 {
		t.Fatalf("a stem found in fresh with nothing published is published: %d published, %d fresh", published(), len(m.fresh))
	}
	for i := range stemsPublish - 1 {
		m.add(fmt.Sprintf("w%04d", i), "x")
	}
	if published() != 1 || len(m.fresh) != stemsPublish-1 {
		t.Fatalf("%d published, %d fresh; want 1 and %d", published(), len(m.fresh), stemsPublish-1)
	}
	m.add("w9999", "x")
	if published() != stemsPublish+1 || len(m.fresh) != 0 {
		t.Fatalf("stemsPublish fresh stems are published at once: %d published, %d fresh", published(), len(m.fresh))
	}
	// Recurring fresh stems: 257 published, so the 33rd hit (> 257/8) publishes.
	m.add("hopping", "hop")
	for i := 1; i <= 32; i++ {
		if s, ok := m.lookup("hopping"); !ok || s != "hop" {
			t.Fatalf("lookup(hopping) = %q, %v", s, ok)
		}
		if published() != stemsPublish+1 {
			t.Fatalf("published after %d hits", i)
		}
	}
	if _, ok := m.lookup("hopping"); !ok || published() != stemsPublish+2 {
		t.Fatalf("the 33rd hit publishes: %d published", published())
	}
	if _, ok := m.lookup("absent"); ok {
		t.Fatal("lookup of a token never added succeeded")
	}
	// Filling up: each publish adds a quarter of what was published (stemsPublish at
	// least), until stemsMax.
	for i, was := published(), published(); i < stemsMax; i++ {
		m.add(fmt.Sprintf("f%07d", i), "y")
		if now := published(); now != was {
			if want := min(max(stemsPublish, was/4), stemsMax-was); now-was != want {
				t.Fatalf("published %d → %d, want %d more", was, now, want)
			}
			was = now
		}
	}
	if !m.full.Load() || published() != stemsMax {
		t.Fatalf("full = %v with %d published, want true and %d", m.full.Load(), published(), stemsMax)
	}
	m.add("later", "lat")
	if _, ok := m.lookup("later"); ok || len(m.fresh) != 0 {
		t.Fatal("a full memo kept a stem")
	}
	if s, ok := m.lookup("running"); !ok || s != "run" {
		t.Fatalf("a full memo lost running: %q, %v", s, ok)
	}
}

// TestPairsFound: a pair counts once however often it occurs, only as adjacent elements in
// its order, and found is cleared before marking.
func TestPairsFound(t *testing.T) {
	seq := []string{"old", "cannery", "roof", "old", "cannery", "bee", "roof"}
	pairs := [][2]string{{"old", "cannery"}, {"cannery", "old"}, {"bee", "roof"}, {"old", "roof"}}
	found := []bool{true, true, true, true, true}
	if n := PairsFound(seq, pairs, found); n != 2 {
		t.Fatalf("PairsFound = %d, want 2", n)
	}
	if want := []bool{true, false, true, false, true}; !reflect.DeepEqual(found, want) {
		t.Fatalf("found = %v, want %v (the fifth is past the pairs, untouched)", found, want)
	}
	if n := PairsFound([]int32{1}, [][2]int32{{1, 1}}, make([]bool, 1)); n != 0 {
		t.Fatalf("a one-element sequence has no pairs; got %d", n)
	}
}
