package eval

import (
	"context"
	_ "embed" // the paraphrase benchmark ships with the binary
	"encoding/json"
	"fmt"
	"time"

	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/recall"
)

// paraphraseJSON is the paraphrase benchmark: facts, each with a question that shares no
// content word with it ("Can she have cheese?" for "I'm lactose intolerant, so I stay away
// from milk products."), and small-talk distractor turns, all written for it.
//
//go:embed paraphrase.json
var paraphraseJSON []byte

// ParaphrasePair is a fact and a question it answers in other words.
type ParaphrasePair struct {
	Fact     string `json:"fact"`
	Question string `json:"question"`
}

// ParaphraseSet is the benchmark: pairs among distractor turns.
type ParaphraseSet struct {
	Pairs       []ParaphrasePair `json:"pairs"`
	Distractors []string         `json:"distractors"`
}

// Paraphrases returns the built-in benchmark.
func Paraphrases() (*ParaphraseSet, error) {
	var s ParaphraseSet
	if err := json.Unmarshal(paraphraseJSON, &s); err != nil {
		return nil, fmt.Errorf("paraphrase.json: %w", err)
	}
	return &s, nil
}

// Conversation lays the set out as one LoCoMo-style conversation: distractors in order with
// the facts spread evenly among them, speakers alternating, and one question per fact with
// that fact's turn as its evidence.
func (s *ParaphraseSet) Conversation() *Conversation {
	c := &Conversation{Name: "paraphrase", SpeakerA: "Ana", SpeakerB: "Ben"}
	sess := Session{N: 1, At: time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)}
	add := func(text string) string {
		speaker := c.SpeakerA
		if len(sess.Turns)%2 == 1 {
			speaker = c.SpeakerB
		}
		id := fmt.Sprintf("D1:%d", len(sess.Turns)+1)
		sess.Turns = append(sess.Turns, Turn{Speaker: speaker, DiaID: id, Text: text})
		return id
	}
	next := 0
	for i, p := range s.Pairs {
		// fact i goes after distractor (i+½)·D/P, so facts are spread through the turns
		for at := (2*i + 1) * len(s.Distractors) / (2 * len(s.Pairs)); next < at; next++ {
			add(s.Distractors[next])
		}
		c.QA = append(c.QA, QA{Question: p.Question, Evidence: []string{add(p.Fact)}, Category: 4})
	}
	for ; next < len(s.Distractors); next++ {
		add(s.Distractors[next])
	}
	c.Sessions = []Session{sess}
	return c
}

// ParaphraseResult is how many facts recall put in the top K for their question.
type ParaphraseResult struct {
	K      int
	Found  int
	Total  int
	Turns  int
	Missed []ParaphrasePair // pairs whose fact was not in the top K
}

// Paraphrase ingests the set through ing and asks each question through p in search mode
// (the server's recall pipeline), counting the facts found in the top k.
func Paraphrase(ctx context.Context, ing *ingest.Service, p *recall.Pipeline, s *ParaphraseSet, k int) (*ParaphraseResult, error) {
	c := s.Conversation()
	byID, err := Ingest(ctx, ing, c)
	if err != nil {
		return nil, err
	}
	res := &ParaphraseResult{K: k, Total: len(c.QA), Turns: len(byID)}
	for i, q := range c.QA {
		ranked, _, err := Ask(ctx, p, c, q, fmt.Sprintf("paraphrase-%d", i), k, byID)
		if err != nil {
			return nil, fmt.Errorf("question %d: %w", i, err)
		}
		hit := false
		for _, id := range ranked {
			hit = hit || id == q.Evidence[0]
		}
		if hit {
			res.Found++
		} else {
			res.Missed = append(res.Missed, s.Pairs[i])
		}
	}
	return res, nil
}
