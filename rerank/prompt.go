package rerank

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/salience-ai/salience/models"
)

// systemPrompt asks for a listwise ranking as strict JSON. Candidates carry short labels
// (m1, m2, …) instead of memory ids: a model copies "m7" reliably, a 26-character ULID
// not always, and a label leaks nothing about the store.
const systemPrompt = `You rerank memories for a conversational assistant. You get the current turn of a conversation and numbered candidate memories. Order the candidates from most to least useful for the assistant's next reply: a memory that answers or directly bears on the turn first, loosely related ones after.
Answer with JSON only, no prose and no code fence, exactly in this form:
{"ranking": ["m3", "m1", "m2"]}
List every candidate id exactly once.`

// Prompt limits: a candidate's text and the turn are clipped to these many bytes (at a
// rune boundary) so one long memory cannot make the call slow or expensive.
const (
	maxQueryBytes     = 2000
	defaultTextBytes  = 600
	labelPrefix       = "m"
	tokensPerLabel    = 6  // `"m12", ` is 4–5 tokens in common tokenizers
	answerTokenMargin = 24 // `{"ranking": [` and `]}`
)

// label is the prompt's name of the i-th (0-based) candidate sent.
func label(i int) string { return labelPrefix + strconv.Itoa(i+1) }

// userPrompt renders the turn and the candidates, one a line: "[m1] text". Newlines in a
// text become spaces so every candidate stays on its line.
func userPrompt(query string, texts []string, maxBytes int) string {
	var b strings.Builder
	b.WriteString("Turn:\n")
	b.WriteString(oneLine(models.Clip(query, maxQueryBytes)))
	b.WriteString("\n\nCandidates:\n")
	for i, t := range texts {
		fmt.Fprintf(&b, "[%s] %s\n", label(i), oneLine(models.Clip(t, maxBytes)))
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// maxAnswerTokens bounds the answer to what a ranking of n labels needs.
func maxAnswerTokens(n int) int { return answerTokenMargin + tokensPerLabel*n }

// errAnswer marks an answer that cannot be used; the pipeline keeps its own order.
var errAnswer = errors.New("unusable answer")

// parseRanking reads the model's answer strictly: one JSON object {"ranking": [...]} and
// nothing else, naming each of the n labels exactly once. It returns the candidates'
// indices in the model's order. The one leniency is a Markdown code fence around the whole
// answer, which chat models add even when told not to; the JSON inside is held to the
// same rules. Anything else — prose around the JSON, unknown or repeated ids, a ranking
// that leaves some candidate out — is an error, and the caller keeps the original order
// rather than guess at what a partial answer meant.
func parseRanking(answer string, n int) ([]int, error) {
	s := strings.TrimSpace(answer)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		inner, ok := strings.CutSuffix(strings.TrimSpace(rest), "```")
		if !ok {
			return nil, fmt.Errorf("%w: unterminated code fence", errAnswer)
		}
		s = strings.TrimSpace(inner)
	}
	var out struct {
		Ranking []string `json:"ranking"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("%w: not the JSON asked for: %v", errAnswer, err)
	}
	if strings.TrimSpace(s[dec.InputOffset():]) != "" {
		return nil, fmt.Errorf("%w: text after the JSON", errAnswer)
	}
	if out.Ranking == nil {
		return nil, fmt.Errorf("%w: no ranking", errAnswer)
	}
	order := make([]int, 0, n)
	seen := make([]bool, n)
	for _, id := range out.Ranking {
		num, ok := strings.CutPrefix(strings.TrimSpace(id), labelPrefix)
		i, err := strconv.Atoi(num)
		if !ok || err != nil || i < 1 || i > n || num != strconv.Itoa(i) {
			return nil, fmt.Errorf("%w: unknown id %q", errAnswer, models.Clip(id, 40))
		}
		if seen[i-1] {
			return nil, fmt.Errorf("%w: id %q listed twice", errAnswer, id)
		}
		seen[i-1] = true
		order = append(order, i-1)
	}
	if len(order) != n {
		return nil, fmt.Errorf("%w: ranked %d of %d candidates", errAnswer, len(order), n)
	}
	return order, nil
}
