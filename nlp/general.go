package nlp

import (
	_ "embed" // the general word frequencies are built into the binary
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// wordfreqTable is general English's word frequencies by analysed term: wordfreq.txt, made by
// scripts/wordfreq/build.sh from the package wordfreq (its header says the version and the
// data's licence). It is the prior of what a word tells in any namespace: in a namespace of
// five memories every shared word is as rare as any other, and only this tells "place" from
// "harmonica".
//
//go:embed wordfreq.txt
var wordfreqTable string

// general is the parsed table, made on first use.
var general = sync.OnceValue(func() generalTable {
	g, err := parseGeneral(wordfreqTable)
	if err != nil {
		panic("nlp: embedded wordfreq.txt: " + err.Error()) // a test parses it
	}
	return g
})

// generalTable holds each term's Zipf value and the rarest value listed.
type generalTable struct {
	zipf  map[string]float32
	floor float64
}

// parseGeneral reads wordfreq.txt's format: "#" comment lines, then "term<TAB>zipf" lines, the
// Zipf value (log10 of occurrences per billion words) in 0..9 — a word of Zipf 9 would be
// every word of text.
func parseGeneral(s string) (generalTable, error) {
	g := generalTable{zipf: make(map[string]float32, strings.Count(s, "\n")), floor: 9}
	for n, line := range strings.Split(s, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		term, v, ok := strings.Cut(line, "\t")
		if !ok || term == "" {
			return generalTable{}, fmt.Errorf("line %d: want term<TAB>zipf", n+1)
		}
		z, err := strconv.ParseFloat(v, 32)
		if err != nil || !(z >= 0 && z <= 9) {
			return generalTable{}, fmt.Errorf("line %d: zipf %q: want a number in 0..9", n+1, v)
		}
		if _, dup := g.zipf[term]; dup {
			return generalTable{}, fmt.Errorf("line %d: term %q listed twice", n+1, term)
		}
		g.zipf[term] = float32(z)
		g.floor = min(g.floor, z)
	}
	if len(g.zipf) == 0 {
		return generalTable{}, fmt.Errorf("no terms")
	}
	return g, nil
}

// GeneralIDF returns an analysed term's information in general English, −ln of its frequency
// per word of running text (a term used once per thousand words: 6.9). A term the table does
// not list (it lists the most frequent tens of thousands of words) is rare: it gets the
// rarest listed term's information and known is false.
func GeneralIDF(term string) (idf float64, known bool) {
	g := general()
	z, known := g.zipf[term]
	if !known {
		return zipfIDF(g.floor), false
	}
	return zipfIDF(float64(z)), true
}

// zipfIDF is −ln of the per-word frequency of a Zipf value z (10^(z−9)).
func zipfIDF(z float64) float64 { return (9 - z) * math.Ln10 }

// informedZipf is where a word starts to count fully: Zipf 4.5, about once per 30,000 words
// of general English ("kayak" 3.5, "dog" 5.3, "place" 5.9, "people" 6.3).
const informedZipf = 4.5

// Informativeness returns how much of its weight a term keeps for being the word it is, in
// 0..1: (GeneralIDF(t) / GeneralIDF of a Zipf-4.5 word)², at most 1. A word once per 30,000
// words or rarer keeps all of it, "dog" two thirds, "place" half, "people" a third. Squared,
// because in a small namespace every shared word has the same idf and only document length
// tells them apart: a common word's match must stay below a content word's match in a
// document a few times longer (the plain ratio did not: TestFillerNeverDecides in package
// index).
func Informativeness(term string) float64 {
	idf, _ := GeneralIDF(term)
	r := min(1, idf/zipfIDF(informedZipf))
	return r * r
}

// priorDocs is how many documents of a namespace's own statistics the general prior is worth.
const priorDocs = 300

// Prior returns the factor on a term's idf in a text index of docs documents:
// Informativeness(term)^(priorDocs/(priorDocs + docs)). It is a prior: it decides where the
// index has little evidence of its own (five memories: nearly the whole factor) and fades as
// the index's document frequencies come to say which words are common here (3,000 memories:
// its eleventh root). On LoCoMo's dev conversations (370–680 turns each) the fading prior
// kept the feedback loop's lift (--learn +0.044, against +0.044 without a prior and +0.034
// with the whole factor at every size) and lifted recall@10 (lexical 0.691 against 0.685).
func Prior(term string, docs int) float64 {
	g := Informativeness(term)
	if g >= 1 {
		return 1
	}
	return math.Pow(g, priorDocs/(priorDocs+float64(max(docs, 0))))
}
