package nlp

import (
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/salience-ai/salience/models"
)

func FuzzTerms(f *testing.F) {
	for _, s := range []string{
		"", "Where are the bees kept?", "don't STOP running", "Caroline's adoption",
		"\xff\xfe bad", "İstanbul ǅemal ΣΑΣ", "it's '' ’s 's", "a-b_c 3rd 2023",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, term := range Terms(text) {
			if term == "" {
				t.Fatalf("Terms(%q) has an empty term", text)
			}
			if strings.ToLower(term) != term {
				t.Fatalf("Terms(%q) has %q, not lower-case", text, term)
			}
			if strings.IndexFunc(term, unicode.IsSpace) >= 0 {
				t.Fatalf("Terms(%q) has %q with white space", text, term)
			}
		}
	})
}

func FuzzChunk(f *testing.F) {
	f.Add("aaa bbb ccc ddd", 8, 4)
	f.Add("abcdefghijkl", 5, 2)
	f.Add("ééé ààà ççç", 7, 3)
	f.Add("x", 0, 0)
	f.Add(strings.Repeat("word ", 300), 500, 50)
	f.Add(strings.Repeat(" ", 40)+"a", 3, 9)
	f.Add("a\xffb c\xfe d", 2, -5)
	f.Fuzz(func(t *testing.T, text string, size, overlap int) {
		checkChunks(t, text, size, overlap, Chunk(text, size, overlap))
	})
}

func FuzzTemporal(f *testing.F) {
	for _, s := range []string{
		"today", "last night", "3 days ago", "two weeks ago", "last Monday", "on Friday",
		"in May", "May 8, 2023", "8th of June 2023", "Feb 29", "in 2022", "last weekend",
		"recently", "31 April 2023", "on 8 May, 2023 and yesterday", "a year ago",
	} {
		f.Add(s, int64(1683745440)) // 2023-05-10 19:04 UTC
	}
	f.Add("next weekend", int64(-62135596800)) // year 1
	f.Fuzz(func(t *testing.T, text string, unix int64) {
		now := time.Unix(unix, 0).In(zone)
		got := Temporal(text, now)
		if now.Year() < 1 || now.Year() > 9999 {
			return // only "never panics" far outside the calendar people write
		}
		for _, r := range got {
			if !r.Start.Before(r.End) {
				t.Fatalf("Temporal(%q, %v): %q has Start %v not before End %v", text, now, r.Phrase, r.Start, r.End)
			}
			if r.Phrase == "" || !strings.Contains(text, r.Phrase) {
				t.Fatalf("Temporal(%q): phrase %q is not in the text", text, r.Phrase)
			}
			if r.Start.Location() != now.Location() || r.End.Location() != now.Location() {
				t.Fatalf("Temporal(%q): range not in now's location", text)
			}
		}
	})
}

func FuzzEntities(f *testing.F) {
	for _, s := range []string{
		"Hey Mel! Good to see you!", "We moved to New York. New York is loud.",
		"Caroline's adoption", "LGBTQ+ folks", "Yo Tim, Woohoo Melanie", "A B C",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		seen := map[string]bool{}
		for _, e := range Entities(text) {
			if e == "" || !strings.Contains(text, e) {
				t.Fatalf("Entities(%q) has %q, not a span of the text", text, e)
			}
			k := models.NormalizeConcept(e)
			if k == "" || seen[k] {
				t.Fatalf("Entities(%q) has %q empty or twice", text, e)
			}
			seen[k] = true
		}
	})
}
