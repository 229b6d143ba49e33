package recall

import (
	"context"
	"strings"

	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// maxContextConcepts bounds the concepts taken from the query and messages.
const maxContextConcepts = 16

// intake is what the pipeline understood of a request (docs/design.md#intake).
type intake struct {
	text     string          // what text and vector search look for
	concepts []string        // normalized context concepts
	focal    string          // normalized focal entity, if any
	ranges   []nlp.TimeRange // temporal phrases of the query
	pairs    [][2]string     // adjacent term pairs of the query, for phrase matches
	terms    []string        // the distinct analysed words of text (learn.QueryTerms)
	question bool            // the latest message, or the query, asks a question (isQuestion)
	context  map[string]bool // the request's messages by contextKey: what the bot has in front of it
	asked    []string        // the analysed words of what is asked now: the query, else the latest message (echoes)
	// learnable are the distinct words of asked (learn.QueryTerms) that the turn's surfacings
	// record: a memory used in the turn learns from them, never from the rest of the window.
	learnable []string
	// askedText is what asks now (the query, else the latest message) when the text holds
	// more (a window of messages); "" when it is the whole text.
	askedText string
	convType  string
	turnID    string
	state     *models.ConversationState // nil without a conversation id
	model     *learn.Model              // the namespace's relevance model
	// sourceModels are the relevance models of a shared-memory recall's other namespaces
	// (sources.go): each source's candidates are judged by their own namespace's model.
	sourceModels map[string]*learn.Model
	// vec and vecErr are the query's embedding and the embedder's error when prefetch
	// embedded it already (embedded).
	vec      []float32
	vecErr   error
	embedded bool
}

// contextMessages is how many of the latest messages ambient recall reads besides the query.
const contextMessages = 3

func (p *Pipeline) intake(ctx context.Context, req *Request) *intake {
	in := &intake{turnID: req.TurnID}
	if in.turnID == "" {
		in.turnID = ids.New(req.Now)
	}
	var parts []string
	if q := strings.TrimSpace(req.Query); q != "" {
		parts = append(parts, q)
	}
	if len(parts) == 0 || req.Mode == models.ModeAmbient {
		msgs := req.Messages
		if len(msgs) > contextMessages {
			msgs = msgs[len(msgs)-contextMessages:]
		}
		for _, m := range msgs {
			if c := strings.TrimSpace(m.Content); c != "" {
				parts = append(parts, c)
			}
		}
	}
	in.text = strings.Join(parts, "\n")
	for _, m := range req.Messages {
		if req.Mode != models.ModeAmbient {
			break // only ambient recall leaves out what the bot has in front of it (keep)
		}
		if k := contextKey(m.Content); k != "" {
			if in.context == nil {
				in.context = map[string]bool{}
			}
			in.context[k] = true
		}
	}

	seen := map[string]bool{}
	add := func(name string) {
		if n := models.NormalizeConcept(name); n != "" && !seen[n] && len(in.concepts) < maxContextConcepts+len(req.Entities) {
			seen[n] = true
			in.concepts = append(in.concepts, n)
		}
	}
	for _, e := range req.Entities {
		add(e)
	}
	for _, m := range nlp.ExtractConcepts(in.text, nil, maxContextConcepts) {
		add(m.Name)
	}
	in.focal = models.NormalizeConcept(req.FocalEntity)
	textTerms := nlp.Terms(in.text)
	queryTerms := textTerms // the query alone is the text, give or take white space around it
	if len(parts) != 1 || parts[0] != strings.TrimSpace(req.Query) {
		queryTerms = nlp.Terms(req.Query)
	}
	in.pairs = pairsOf(queryTerms)
	in.asked = queryTerms
	if strings.TrimSpace(req.Query) == "" && len(parts) > 0 {
		// No query: the latest message asks (alone, it is the whole text).
		in.asked = textTerms
		if len(parts) > 1 {
			in.asked = nlp.Terms(parts[len(parts)-1])
			in.askedText = parts[len(parts)-1]
		}
	} else if len(parts) > 1 {
		in.askedText = parts[0] // the query, before the messages
	}
	if len(parts) > 0 {
		in.question = isQuestion(parts[len(parts)-1])
		if q := strings.TrimSpace(req.Query); q != "" {
			in.question = isQuestion(q)
		}
	}
	in.terms = learn.QueryTerms(textTerms)
	in.learnable = learn.QueryTerms(in.asked)
	in.ranges = nlp.Temporal(req.Query, req.Now)
	in.convType = req.ConversationType
	if in.convType == "" {
		in.convType = nlp.InferConversationType(in.text)
	}
	return in
}

// conversation returns the conversation's state (a new one when none was recorded), or nil
// without a conversation id.
func (p *Pipeline) conversation(ctx context.Context, req *Request) (*models.ConversationState, error) {
	if req.ConversationID == "" {
		return nil, nil
	}
	st, err := p.store.GetConversation(ctx, req.Namespace, req.ConversationID)
	switch {
	case err == nil:
		return st, nil
	case models.ErrorCode(err) == models.ENOTFOUND:
		return &models.ConversationState{Namespace: req.Namespace, ConversationID: req.ConversationID}, nil
	default:
		return nil, err
	}
}

// pairsOf returns the distinct adjacent pairs of different terms of ts, in order.
func pairsOf(ts []string) [][2]string {
	var out [][2]string
	seen := map[[2]string]bool{}
	for i := 0; i+1 < len(ts); i++ {
		pr := [2]string{ts[i], ts[i+1]}
		if pr[0] != pr[1] && !seen[pr] {
			seen[pr] = true
			out = append(out, pr)
		}
	}
	return out
}

// contextKey is how a message and a memory are compared for inContext: white space and
// case do not count.
func contextKey(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// inContext reports whether content is one of the request's messages. Ambient recall does
// not return it: the bot has it in front of it, so it adds nothing (a conversation stores
// each message as it goes, and the last ones are the best matches of the next turn's window).
func (in *intake) inContext(content string) bool {
	return len(in.context) > 0 && in.context[contextKey(content)]
}
