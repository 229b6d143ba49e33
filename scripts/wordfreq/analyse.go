//go:build ignore

// Command analyse turns a list of English words with their frequencies (words.py's output,
// "word<TAB>frequency" lines) into nlp/wordfreq.txt: the terms nlp.Terms makes of them, each
// with the summed frequency of the words that map to it, as a Zipf value. build.sh runs it
// as `go run scripts/wordfreq/analyse.go` (build-ignored, so not one of the module's
// packages). The table must come from the analyser the text index uses: regenerate it when
// stop words or stemming change.
package main

import (
	"bufio"
	"fmt"
	"log"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/salience-ai/salience/nlp"
)

func main() {
	freq := map[string]float64{}
	source := ""
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			source = rest
			continue
		}
		word, f, ok := strings.Cut(line, "\t")
		if !ok {
			log.Fatalf("bad line %q", line)
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v <= 0 {
			log.Fatalf("bad frequency in %q", line)
		}
		for _, t := range nlp.Terms(word) {
			freq[t] += v
		}
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	terms := make([]string, 0, len(freq))
	for t := range freq {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, `# General English word frequencies for nlp.GeneralIDF, by analysed term (nlp.Terms).
# Source: %s, from the Python package wordfreq (code Apache-2.0).
# Licence: wordfreq's data, and so this table, is CC BY-SA 4.0; attribution as in wordfreq's
# README: Google Books Ngrams, the Leeds Internet Corpus, Wikipedia, ParaCrawl, SUBTLEX
# (Brysbaert, New et al.; freely available data), Twitter, among others.
# Regenerate: scripts/wordfreq/build.sh.
# Format: term<TAB>Zipf value (log10 of occurrences per billion words, summed over the words
# that analyse to the term), sorted by term.
`, source)
	for _, t := range terms {
		fmt.Fprintf(w, "%s\t%.2f\n", t, math.Log10(freq[t])+9)
	}
}
