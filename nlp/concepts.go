package nlp

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/salience-ai/salience/models"
)

// Mention kinds, the same strings as models.ConceptEntity and models.ConceptTopic.
const (
	KindEntity = "entity"
	KindTopic  = "topic"
)

// Mention is a concept found in a text. Name is lower-cased and space-normalized exactly
// like models.NormalizeConcept, so models.ConceptID(Name) is its node id.
type Mention struct {
	Name string
	Kind string // KindEntity or KindTopic
}

// Entities returns the capitalized spans of text ("Caroline", "New York", "LGBTQ") as they
// appear, first occurrence first, de-duplicated case-insensitively.
//
// A span is a run of capitalized words separated only by spaces; punctuation, a line break
// or a possessive ("Caroline's") ends it. Skipped words: stop words in any position
// ("I", "The"); single letters; month and weekday names (temporal phrases, not entities);
// interjections ("Yo", "Woohoo"); and at the start of a sentence — where every word is
// capitalized — chat openers and reactions ("Thanks", "Good"), words with the endings of
// adverbs, gerunds and abstract nouns ("Honestly", "Painting"), and words the same text
// also writes in lower case. A one-word entity that ends a longer one ("York" beside
// "New York") is dropped.
func Entities(text string) []string {
	words := scanWords(text)
	lowerSeen := map[string]struct{}{}
	for _, w := range words {
		if r, _ := utf8.DecodeRuneInString(w.text); unicode.IsLower(r) {
			lowerSeen[strings.ToLower(w.text)] = struct{}{}
		}
	}

	var out []string
	seen := map[string]struct{}{}
	spanStart, spanEnd := -1, -1
	closeSpan := func() {
		if spanStart >= 0 {
			s := text[spanStart:spanEnd]
			if key := models.NormalizeConcept(s); key != "" {
				if _, dup := seen[key]; !dup {
					seen[key] = struct{}{}
					out = append(out, s)
				}
			}
		}
		spanStart, spanEnd = -1, -1
	}
	prevPossessive := false
	for _, w := range words {
		if !entityWord(w, lowerSeen) {
			closeSpan()
			prevPossessive = false
			continue
		}
		if spanStart >= 0 && (prevPossessive || !onlySpaces(w.sep)) {
			closeSpan()
		}
		if spanStart < 0 {
			spanStart = w.start
		}
		spanEnd = w.end
		prevPossessive = w.possessive
	}
	closeSpan()
	return dropTails(out)
}

// dropTails removes an entity that ends a longer one ("York" beside "New York"): the
// longer span was cut where its first word opened a sentence.
func dropTails(ents []string) []string {
	norm := make([]string, len(ents))
	tails := map[string]struct{}{}
	for i, e := range ents {
		norm[i] = models.NormalizeConcept(e)
		for j := 1; j < len(norm[i]); j++ {
			if norm[i][j-1] == ' ' {
				tails[norm[i][j:]] = struct{}{}
			}
		}
	}
	out := ents[:0]
	for i, e := range ents {
		if _, tail := tails[norm[i]]; !tail {
			out = append(out, e)
		}
	}
	return out
}

// dropApostrophes writes a word the way Tokens does ("it'll" → "itll").
var dropApostrophes = strings.NewReplacer("'", "", "’", "")

// entityWord decides whether one word can be part of an entity span.
func entityWord(w word, lowerSeen map[string]struct{}) bool {
	first, _ := utf8.DecodeRuneInString(w.text)
	if !unicode.IsUpper(first) && !unicode.IsTitle(first) {
		return false
	}
	if utf8.RuneCountInString(w.text) < 2 {
		return false
	}
	lower := strings.ToLower(w.text)
	plain := dropApostrophes.Replace(lower)
	if IsStopWord(plain) || IsStopWord(lower) {
		return false
	}
	// "You'd", "It'll", "They've": a stop word with a contraction.
	if i := strings.IndexAny(lower, "'’"); i > 0 && IsStopWord(lower[:i]) {
		return false
	}
	if in(interjections, plain) {
		return false
	}
	if _, ok := weekdays[lower]; ok && len(lower) > 3 {
		return false
	}
	if _, ok := months[lower]; ok && (len(lower) > 3 || lower == "may") {
		return false
	}
	if !w.initial {
		return true
	}
	if in(weakWords, plain) || in(sentenceStarters, lower) || in(sentenceStarters, plain) {
		return false
	}
	if _, ok := lowerSeen[lower]; ok {
		return false
	}
	if n := utf8.RuneCountInString(lower); n > 5 {
		for _, suf := range initialSuffixes {
			if strings.HasSuffix(lower, suf) {
				return false
			}
		}
	}
	return true
}

// initialSuffixes mark a capitalized word of more than 5 letters at the start of a sentence
// as an ordinary word, not a name: adverbs, gerunds, past tenses, abstract nouns
// ("Honestly", "Painting", "Started", "Conversations", "Appreciate", "Cherish"). A name
// with such an ending is still found where it is not the first word of a sentence.
var initialSuffixes = []string{"ly", "ing", "ed", "ions", "ness", "ment", "ments", "ate", "ish", "ful"}

// Keywords returns up to limit salient words of text, lower-case: not stop words or weak chat
// words, at least 3 letters, not numbers. Words with the same Porter stem count as one and
// are named by their most frequent form, the first on ties ("painting paintings" →
// "painting"). Most frequent first, ties by first occurrence. limit ≤ 0 means no limit.
func Keywords(text string, limit int) []string {
	type group struct {
		name  string // the most frequent form, the first on ties
		count int
		first int
	}
	var groups []*group
	byStem := map[string]*group{}
	forms := map[string]int{} // form → count
	for i, tok := range Tokens(text) {
		if !keyword(tok) {
			continue
		}
		forms[tok]++
		st := Stem(tok)
		g := byStem[st]
		if g == nil {
			g = &group{name: tok, first: i}
			byStem[st] = g
			groups = append(groups, g)
		}
		g.count++
		if forms[tok] > forms[g.name] {
			g.name = tok
		}
	}
	slices.SortStableFunc(groups, func(a, b *group) int {
		if a.count != b.count {
			return b.count - a.count
		}
		return a.first - b.first
	})
	if limit > 0 && len(groups) > limit {
		groups = groups[:limit]
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = g.name
	}
	return out
}

// keyword reports whether a lower-case token may be a keyword.
func keyword(tok string) bool {
	if IsStopWord(tok) || in(weakWords, tok) || isNumber(tok) {
		return false
	}
	letters := 0
	for _, r := range tok {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters >= 3
}

// maxPhrase is the longest known-concept phrase, in words, that ExtractConcepts looks up.
const maxPhrase = 3

// ExtractConcepts returns the concepts text mentions, at most limit (≤ 0: no limit), in
// this order: entities (Entities); phrases of 1–3 words that known accepts — known is asked
// about normalized phrases, longest first, left to right, so a namespace's existing
// concepts are found even when not capitalized (known may be nil); then keywords as topics.
// Names are normalized (models.NormalizeConcept) and de-duplicated; a keyword is dropped when a
// word of an earlier mention has the same stem ("york" after "new york").
func ExtractConcepts(text string, known func(normalizedPhrase string) bool, limit int) []Mention {
	var out []Mention
	names := map[string]struct{}{}
	stems := map[string]struct{}{}
	add := func(name, kind string) bool {
		if name == "" {
			return false
		}
		if _, dup := names[name]; dup {
			return false
		}
		names[name] = struct{}{}
		for _, w := range Tokens(name) {
			stems[Stem(w)] = struct{}{}
		}
		out = append(out, Mention{Name: name, Kind: kind})
		return true
	}
	full := func() bool { return limit > 0 && len(out) >= limit }

	for _, e := range Entities(text) {
		if full() {
			return out
		}
		add(models.NormalizeConcept(e), KindEntity)
	}

	if known != nil {
		words := scanWords(text)
		norm := make([]string, len(words))
		for i, w := range words {
			norm[i] = models.NormalizeConcept(w.text)
		}
		for i := 0; i < len(words) && !full(); {
			matched := 0
			for n := min(maxPhrase, len(words)-i); n >= 1; n-- {
				if !phraseCandidate(words[i:i+n], norm[i:i+n]) {
					continue
				}
				phrase := strings.Join(norm[i:i+n], " ")
				if _, dup := names[phrase]; dup {
					matched = n
					break
				}
				if known(phrase) {
					kind := KindTopic
					if r, _ := utf8.DecodeRuneInString(words[i].text); unicode.IsUpper(r) && !words[i].initial {
						kind = KindEntity
					}
					add(phrase, kind)
					matched = n
					break
				}
			}
			i += max(1, matched)
		}
	}

	for _, k := range Keywords(text, 0) {
		if full() {
			break
		}
		if _, ok := stems[Stem(k)]; ok {
			continue
		}
		add(k, KindTopic)
	}
	return out
}

// phraseCandidate says whether words (and their normalized forms) may name a known concept:
// words joined only by spaces within one line, a lone word that is neither a stop word nor
// a number.
func phraseCandidate(words []word, norm []string) bool {
	for j := 1; j < len(words); j++ {
		if !onlySpaces(words[j].sep) || words[j-1].possessive {
			return false
		}
	}
	if len(words) == 1 {
		n := norm[0]
		return n != "" && !IsStopWord(n) && !isNumber(n)
	}
	return true
}
