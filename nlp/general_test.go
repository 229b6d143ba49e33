package nlp

import (
	"math"
	"strings"
	"testing"
)

func TestGeneralTableParses(t *testing.T) {
	g, err := parseGeneral(wordfreqTable)
	if err != nil {
		t.Fatalf("embedded wordfreq.txt: %v", err)
	}
	if len(g.zipf) < 10_000 {
		t.Fatalf("table has %d terms, want the top tens of thousands of words", len(g.zipf))
	}
	// Its keys are terms as the index sees them: analysing a key gives the key back for the
	// common words the table exists for (stems may differ for a few made-up forms).
	for _, w := range []string{"weather", "parking", "violins"} {
		ts := Terms(w)
		if len(ts) != 1 {
			t.Fatalf("Terms(%q) = %q", w, ts)
		}
		if _, ok := g.zipf[ts[0]]; !ok {
			t.Fatalf("table lacks %q, the term of %q", ts[0], w)
		}
	}
}

// The prior's values for known words: what wordfreq 3.1.1 says of them, analysed.
func TestGeneralIDF(t *testing.T) {
	for _, tt := range []struct {
		word string
		zipf float64 // in nlp/wordfreq.txt
	}{
		{"people", 6.27},    // term "peopl": "people" and "peoples"
		{"number", 5.72},    // term "number"
		{"kayak", 3.45},     // a content word
		{"accordion", 3.09}, // rarer still
	} {
		term := Terms(tt.word)[0]
		idf, known := GeneralIDF(term)
		if want := (9 - tt.zipf) * math.Ln10; !known || math.Abs(idf-want) > 1e-6 {
			t.Errorf("GeneralIDF(%q) = %v, %v; want %v, true", term, idf, known, want)
		}
	}
	// Frequency ordering, which is what the index uses: common < content < unknown.
	common, _ := GeneralIDF(Terms("people")[0])
	content, _ := GeneralIDF(Terms("kayak")[0])
	unknown, known := GeneralIDF("qzxvwk")
	if known {
		t.Fatalf("GeneralIDF(made-up word) known")
	}
	if !(common < content && content <= unknown) {
		t.Fatalf("GeneralIDF: people %v, kayak %v, unknown %v; want increasing", common, content, unknown)
	}
	// An unknown word is as rare as the rarest listed: no less informative than a listed one.
	if want := zipfIDF(general().floor); unknown != want {
		t.Fatalf("GeneralIDF(unknown) = %v, want the floor's %v", unknown, want)
	}
}

func TestInformativeness(t *testing.T) {
	for _, tt := range []struct {
		word string
		want float64
	}{
		// ((9 − zipf)/(9 − 4.5))², at most 1.
		{"people", math.Pow((9-6.27)/4.5, 2)},
		{"place", math.Pow((9-5.85)/4.5, 2)},
		{"kayak", 1},
		{"qzxvwk", 1},
	} {
		term := Terms(tt.word)[0]
		if got := Informativeness(term); math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("Informativeness(%q) = %v, want %v", term, got, tt.want)
		}
	}
}

func TestParseGeneralRejects(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"empty", "# only a comment\n", "no terms"},
		{"no tab", "word 5.1\n", "line 1"},
		{"empty term", "\t5.1\n", "line 1"},
		{"not a number", "word\tfive\n", "zipf"},
		{"negative", "word\t-1\n", "zipf"},
		{"past every word", "word\t9.5\n", "zipf"},
		{"NaN", "word\tNaN\n", "zipf"},
		{"duplicate", "word\t5\nword\t4\n", "twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parseGeneral(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("parseGeneral(%q) = %v, want an error with %q", tt.in, err, tt.want)
			}
		})
	}
}

// FuzzParseGeneral: any input parses or is refused; what parses gives each term an idf ≥ 0
// and an informativeness in 0..1, the floor at most any listed term's Zipf value.
func FuzzParseGeneral(f *testing.F) {
	f.Add("# c\nword\t5.10\nother\t3\n")
	f.Add("a\t0\nb\t9\n")
	f.Add("x\t1e0\n\n#\n")
	f.Add(wordfreqTable[:2000])
	f.Fuzz(func(t *testing.T, s string) {
		g, err := parseGeneral(s)
		if err != nil {
			return
		}
		for term, z := range g.zipf {
			if term == "" || strings.ContainsAny(term, "\t\n") {
				t.Fatalf("parsed term %q", term)
			}
			if float64(z) < g.floor-1e-6 {
				t.Fatalf("term %q zipf %v below the floor %v", term, z, g.floor)
			}
			if idf := zipfIDF(float64(z)); !(idf >= -1e-5) {
				t.Fatalf("term %q zipf %v: idf %v", term, z, idf)
			}
		}
	})
}

// The prior decides in a small index and fades as the index's own statistics grow.
func TestPriorFades(t *testing.T) {
	place := Terms("place")[0]
	g := Informativeness(place)
	for _, tt := range []struct {
		docs int
		want float64
	}{
		{-1, g}, // no documents: the whole factor
		{0, g},
		{300, math.Sqrt(g)}, // as many documents as the prior is worth: half its say
		{2700, math.Pow(g, 0.1)},
	} {
		if got := Prior(place, tt.docs); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Prior(%q, %d) = %v, want %v", place, tt.docs, got, tt.want)
		}
	}
	if got := Prior(Terms("kayak")[0], 5); got != 1 {
		t.Errorf("Prior(kayak, 5) = %v, want 1: a rare word keeps its whole idf", got)
	}
	for docs := 0; docs < 5000; docs += 50 {
		if a, b := Prior(place, docs), Prior(place, docs+50); !(a < b && b < 1) {
			t.Fatalf("Prior(place) at %d, %d docs = %v, %v: want rising below 1", docs, docs+50, a, b)
		}
	}
}
