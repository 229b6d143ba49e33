package recall

import (
	"strings"
	"unicode"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// Echoes are not answers: a stored question, or the bot's own reply, that says back what the
// query asks matches it word for word and tells nothing. Restating the query is not matching
// it, so such a memory's match evidence is discounted by how much it only restates (restates)
// before it is weighed against memories that answer.

// echoShare is the least share of a question memory's content terms that must be the query's
// own, and of the query's terms it must hold, for the question to count as restating it. A
// question that brings words of its own ("where did you put the spare key to the shed?" for
// "where is the key?") is about more than the query, and keeps its match.
const echoShare = 0.75

// restates returns, in 0..1, how much a memory only restates the query, from the memory's
// content terms and the query's. A question holding the query's terms restates it by the
// share of its terms that are the query's (1: it says nothing beyond the query). The bot's
// own reply holding the query's terms restates it by that share times how much of the query
// it holds: what the reply says beyond the query keeps its match, so the bot's record of
// what it did stays evidence. Anything else, or a memory holding too little of the query,
// restates nothing.
func restates(memTerms, queryTerms []string, question, assistant bool) float64 {
	if !question && !assistant || len(memTerms) == 0 || len(queryTerms) == 0 {
		return 0
	}
	held, share := overlap(memTerms, queryTerms)
	switch {
	case held < echoShare:
		return 0
	case question && share >= echoShare:
		return share
	case assistant:
		return held * share
	}
	return 0
}

// overlap returns the share of the query's distinct terms the memory holds, and the share of
// the memory's distinct terms that are the query's.
func overlap(memTerms, queryTerms []string) (held, share float64) {
	q := make(map[string]bool, len(queryTerms))
	for _, t := range queryTerms {
		q[t] = true
	}
	seen := make(map[string]bool, len(memTerms))
	own, shared := 0, 0
	for _, t := range memTerms {
		if seen[t] {
			continue
		}
		seen[t] = true
		own++
		if q[t] {
			shared++
		}
	}
	if own == 0 || len(q) == 0 {
		return 0, 0
	}
	return float64(shared) / float64(len(q)), float64(shared) / float64(own)
}

// interrogatives open a question in English: wh-words and the auxiliaries of an inverted
// question. A closed grammatical class, not words picked from any conversation.
var interrogatives = map[string]bool{
	"who": true, "whom": true, "whose": true, "what": true, "which": true, "where": true,
	"when": true, "why": true, "how": true, "do": true, "does": true, "did": true, "is": true,
	"are": true, "was": true, "were": true, "can": true, "could": true, "will": true,
	"would": true, "shall": true, "should": true, "may": true, "might": true, "have": true,
	"has": true, "had": true, "am": true,
}

// isQuestion reports whether text (its last sentence, a "Speaker: " label aside) asks
// something: it ends with '?', or, unpunctuated as chat often is, opens with an interrogative.
func isQuestion(text string) bool {
	t := strings.TrimRightFunc(text, func(r rune) bool { return unicode.IsSpace(r) || r == '"' || r == '\'' || r == ')' })
	if strings.HasSuffix(t, "?") {
		return true
	}
	if strings.HasSuffix(t, ".") || strings.HasSuffix(t, "!") {
		return false
	}
	// The last sentence, without a conversation turn's "Name: " label.
	if i := strings.LastIndexAny(t, ".!?\n"); i >= 0 {
		t = t[i+1:]
	}
	if i := strings.Index(t, ": "); i >= 0 && i < 40 {
		t = t[i+2:]
	}
	w := strings.FieldsFunc(t, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	if len(w) < 2 {
		return false
	}
	return interrogatives[strings.ToLower(w[0])]
}

// memoryRestates is restates for memory m against the asked question's terms: the one place
// that says which memories may be echoes (questions, the bot's replies). The bot's reply
// that asks the question again ("I remember: <the question>") restates it whole, however
// many words of its own it wraps it in: a bot repeating the user is never evidence for what
// the user asks. Only those memories' content is analysed, so ranking pays for it only on
// echo candidates.
func memoryRestates(m *models.Memory, queryTerms []string) float64 {
	if len(queryTerms) == 0 {
		return 0
	}
	assistant := m.Source.Role == models.RoleAssistant
	question := isQuestion(m.Content)
	if !question && !assistant {
		return 0
	}
	terms := nlp.Terms(m.Content)
	if assistant {
		for _, q := range questions(m.Content) {
			if restates(nlp.Terms(q), queryTerms, true, false) > 0 {
				held, _ := overlap(terms, queryTerms)
				return held
			}
		}
	}
	return restates(terms, queryTerms, question, assistant)
}

// questions returns the sentences of text that ask something (isQuestion), each without a
// "Name: " label before it.
func questions(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if r != '?' && r != '.' && r != '!' && r != '\n' {
			continue
		}
		if sent := text[start : i+1]; isQuestion(sent) {
			out = append(out, sent)
		}
		start = i + 1
	}
	if rest := text[start:]; strings.TrimSpace(rest) != "" && isQuestion(rest) {
		out = append(out, rest)
	}
	return out
}
