package learn

import (
	"math"
	"slices"
	"testing"

	"github.com/salience-ai/salience/nlp"
)

// TestLinked: a use teaches only words of the asked message, only when the message holds an
// informative word of the memory's own, at most MaxTermsPerUse of them, the most informative.
func TestLinked(t *testing.T) {
	// Informativeness by hand; a word not listed is filler (0).
	info := func(term string) float64 {
		return map[string]float64{
			"priya": 5, "night": 5, "bakeri": 6, "bake": 4, "sourdough": 9, "oven": 4,
			"flour": 5, "rye": 3, "crust": 5, "landlord": 8, "rent": 4, "letter": 6,
		}[term]
	}
	own := []string{"priya", "work", "night", "shift", "bakeri", "elm", "street", "still"}
	for _, tc := range []struct {
		name  string
		asked []string
		want  []string
	}{
		{"linked by her name: the new words, filler out", []string{"priya", "still", "bake", "sourdough", "night"}, []string{"bake", "sourdough"}},
		{"no word of its own: nothing", []string{"landlord", "rent", "letter"}, nil},
		{"linked by filler only: nothing", []string{"still", "bake", "sourdough"}, nil},
		{"only words it has: nothing", []string{"priya", "night"}, nil},
		// sourdough 9, flour 5, crust 5, then oven and bake tie at 4 and oven was said first;
		// rye 3 is left out. The words come back in the message's order.
		{"the most informative few", []string{"night", "oven", "flour", "rye", "crust", "sourdough", "bake"}, []string{"oven", "flour", "crust", "sourdough"}},
		{"each word once", []string{"bakeri", "bake", "bake"}, []string{"bake"}},
		{"nothing asked", nil, nil},
	} {
		if got := Linked(tc.asked, own, info); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Linked(%v) = %v, want %v", tc.name, tc.asked, got, tc.want)
		}
	}
	if MaxTermsPerUse != 4 {
		t.Errorf("MaxTermsPerUse = %d; the table above assumes 4", MaxTermsPerUse)
	}
}

// TestLinkedInformative: with the default informativeness and nlp's analysis, the chat
// filler of a message is neither a link nor learned.
func TestLinkedInformative(t *testing.T) {
	own := nlp.Terms("Priya works night shifts at the bakery on Elm Street.")
	asked := nlp.Terms("Honestly, is Priya still baking sourdough through the night? One more thing.")
	if got, want := Linked(asked, own, Informative), []string{"bake", "sourdough"}; !slices.Equal(got, want) {
		t.Errorf("Linked = %v, want %v (asked %v)", got, want, asked)
	}
	// A message that shares only filler with the memory ("one" is stemmed "on") teaches nothing.
	own = nlp.Terms("Priya bought one sourdough starter kit.")
	asked = nlp.Terms("One of these days I'll fix the leaking tap.")
	if got := Linked(asked, own, Informative); got != nil {
		t.Errorf("linked by filler alone: Linked = %v, want nothing", got)
	}
	// Filler: stop and chat words, and words common in general English (Zipf above 5.5:
	// "night" 5.65, "place" 5.85). Others score their general idf, (9 − Zipf)·ln 10: "bake"
	// (Zipf 4.39) 10.61, rarer "sourdough" more.
	for term, want := range map[string]float64{"on": 0, "still": 0, "thing": 0, "": 0, "night": 0, "place": 0} {
		if got := Informative(term); got != want {
			t.Errorf("Informative(%q) = %v, want %v", term, got, want)
		}
	}
	if b, s := Informative("bake"), Informative("sourdough"); math.Abs(b-(9-4.39)*math.Ln10) > 1e-5 || !(s > b) {
		t.Errorf("Informative(bake) = %v, want %v; Informative(sourdough) = %v, want more", b, (9-4.39)*math.Ln10, s)
	}
}

// TestLinkedConcepts: a use ties a memory to the concepts said in the message that asked,
// when that message links to it; never to the window's other concepts.
func TestLinkedConcepts(t *testing.T) {
	own := nlp.Terms("Priya works night shifts at the bakery on Elm Street.")
	window := []string{"landlord", "rent", "priya", "sourdough", "night shifts", "one"}
	asked := nlp.Terms("Is Priya still baking sourdough on her night shifts? One more thing.")
	if got, want := LinkedConcepts(window, asked, own, Informative), []string{"priya", "sourdough", "night shifts"}; !slices.Equal(got, want) {
		t.Errorf("LinkedConcepts = %v, want %v", got, want)
	}
	if got := LinkedConcepts(window, nlp.Terms("The landlord wants the rent in cash."), own, Informative); got != nil {
		t.Errorf("a message about something else tied the memory to %v, want nothing", got)
	}
}

// FuzzLinked: whatever the texts, a use teaches at most MaxTermsPerUse distinct words of the
// asked message, none the memory has, none filler, and only when the message links to it.
func FuzzLinked(f *testing.F) {
	f.Add("Is Priya still baking sourdough on her night shifts?", "Priya works night shifts at the bakery.")
	f.Add("one one one", "one more thing")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, message, content string) {
		asked, own := nlp.Terms(message), nlp.Terms(content)
		got := Linked(asked, own, Informative)
		if len(got) > MaxTermsPerUse {
			t.Fatalf("%d words, more than %d: %v", len(got), MaxTermsPerUse, got)
		}
		if len(got) > 0 && !links(asked, own, Informative) {
			t.Fatalf("learned %v from a message that does not link to the memory", got)
		}
		for i, w := range got {
			if !slices.Contains(asked, w) || slices.Contains(own, w) || Informative(w) <= 0 || slices.Contains(got[:i], w) {
				t.Fatalf("learned %q: not asked, the memory's own, filler or repeated (%v of %v)", w, got, asked)
			}
		}
	})
}
