package nlp

import (
	"strings"
	"unicode/utf8"

	"github.com/salience-ai/salience/models"
)

// EstimateTokens estimates how many LLM tokens text costs: one per 4 characters (runes),
// rounded up — the usual rule of thumb for English with BPE tokenizers — and at least 1 for
// non-empty text. It is for packing a token budget, not for billing.
func EstimateTokens(text string) int {
	if text == "" {
		return 0
	}
	return (utf8.RuneCountInString(text) + 3) / 4
}

// cue is a word or phrase (lower-case tokens joined by one space, as Tokens writes them)
// that hints at a conversation type. Phrases and unambiguous words weigh 2, words that
// also occur in other kinds of talk weigh 1.
type cue struct {
	phrase string
	weight int
}

// conversationCues lists the cues per type, in tie-break order: when two types score the
// same, the earlier wins, because a debugging conversation is usually also polite and
// asks for help, while casual talk rarely mentions stack traces.
var conversationCues = []struct {
	kind string
	cues []cue
}{
	{models.ConvDebugging, []cue{
		{"error", 2}, {"errors", 2}, {"bug", 2}, {"bugs", 2}, {"stack trace", 2},
		{"stacktrace", 2}, {"traceback", 2}, {"crash", 2}, {"crashes", 2}, {"crashed", 2},
		{"crashing", 2}, {"exception", 2}, {"segfault", 2}, {"panic", 1}, {"panics", 2},
		{"fix", 1}, {"fixed", 1}, {"fixing", 1}, {"debug", 2}, {"debugging", 2},
		{"broken", 1}, {"failing", 1}, {"fails", 1}, {"failed", 1}, {"null pointer", 2},
		{"nil pointer", 2}, {"undefined", 1}, {"doesnt work", 2}, {"not working", 2},
		{"stopped working", 2}, {"compile", 1}, {"compiler", 1}, {"timeout", 1},
	}},
	{models.ConvHelpSeeking, []cue{
		{"how do i", 2}, {"how can i", 2}, {"how to", 2}, {"how should i", 2},
		{"can you help", 2}, {"could you help", 2}, {"help me", 2}, {"need help", 2},
		{"please", 1}, {"need", 1}, {"should i", 2}, {"any advice", 2}, {"advice", 1},
		{"recommend", 1}, {"recommendation", 1}, {"what should", 2}, {"is there a way", 2},
		{"help", 1}, {"explain", 1}, {"show me", 2},
	}},
	{models.ConvExploration, []cue{
		{"what if", 2}, {"curious", 2}, {"wonder", 2}, {"wondering", 2}, {"explore", 2},
		{"exploring", 2}, {"idea", 1}, {"ideas", 1}, {"imagine", 1}, {"brainstorm", 2},
		{"hypothetically", 2}, {"thinking about", 1}, {"possibilities", 1}, {"alternatives", 1},
		{"compare", 1}, {"would it be possible", 2}, {"what would happen", 2},
	}},
	{models.ConvCasual, []cue{
		{"hi", 1}, {"hey", 1}, {"hello", 1}, {"good morning", 2}, {"good night", 2},
		{"how are you", 2}, {"hows it going", 2}, {"whats up", 2}, {"lol", 2}, {"haha", 2},
		{"lmao", 2}, {"weekend", 1}, {"feel", 1}, {"feeling", 1}, {"felt", 1}, {"happy", 1},
		{"sad", 1}, {"excited", 1}, {"tired", 1}, {"fun", 1}, {"awesome", 1}, {"glad", 1},
		{"miss you", 2}, {"love", 1}, {"thanks", 1}, {"congrats", 2}, {"family", 1},
		{"kids", 1}, {"friends", 1}, {"vacation", 1}, {"party", 1},
	}},
}

// maxCueWords is the longest cue, in tokens.
const maxCueWords = 4

// cueIndex maps each cue phrase to its type's position in conversationCues and weight.
var cueIndex = func() map[string][]struct{ kind, weight int } {
	m := map[string][]struct{ kind, weight int }{}
	for k, c := range conversationCues {
		for _, q := range c.cues {
			m[q.phrase] = append(m[q.phrase], struct{ kind, weight int }{k, q.weight})
		}
	}
	return m
}()

// Classification is the conversation type inferred from text and why: the score of each
// type and the cues that matched, as "type: cue" in text order.
type Classification struct {
	Type   string         `json:"type"`
	Scores map[string]int `json:"scores,omitempty"`
	Cues   []string       `json:"cues,omitempty"`
}

// InferConversationType guesses the kind of conversation text comes from by weighted cue
// words and phrases (see conversationCues): debugging (errors, crashes, fixes),
// help-seeking (how do I, can you help, please, need), exploration (what if, curious,
// wonder, ideas), casual (greetings, feelings, weekends, lol), else other. The highest
// total wins; ties go to the type listed first. ClassifyConversation says why.
func InferConversationType(text string) string { return ClassifyConversation(text).Type }

// ClassifyConversation is InferConversationType with its reasons.
func ClassifyConversation(text string) Classification {
	toks := Tokens(text)
	scores := make([]int, len(conversationCues))
	var cues []string
	for i := range toks {
		for n := 1; n <= maxCueWords && i+n <= len(toks); n++ {
			phrase := toks[i]
			if n > 1 {
				phrase = strings.Join(toks[i:i+n], " ")
			}
			for _, h := range cueIndex[phrase] {
				scores[h.kind] += h.weight
				cues = append(cues, conversationCues[h.kind].kind+": "+phrase)
			}
		}
	}
	c := Classification{Type: models.ConvOther, Cues: cues}
	best, bestScore := -1, 0
	for k, s := range scores {
		if s > 0 {
			if c.Scores == nil {
				c.Scores = map[string]int{}
			}
			c.Scores[conversationCues[k].kind] = s
		}
		if s > bestScore {
			best, bestScore = k, s
		}
	}
	if best >= 0 {
		c.Type = conversationCues[best].kind
	}
	return c
}
