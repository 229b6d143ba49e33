package ingest

import (
	"context"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// link derives each memory's concepts and its edges: mentions of extracted entities and
// topics, the client's declared concepts, domains and triggers, a fact's relation, and a
// temporal edge from the previous memory of the same conversation.
func (s *Service) link(ctx context.Context, ns string, writes []*models.MemoryWrite, now time.Time) error {
	known, err := s.knownPhrases(ctx, ns, writes)
	if err != nil {
		return err
	}
	isKnown := func(p string) bool { return known[p] }

	// last memory per conversation, seeded from the store and moved along the batch.
	last := map[string]string{}
	for _, w := range writes {
		m := w.Memory
		cs := newConceptSet(ns, m.CreatedAt)
		for _, c := range m.Concepts {
			cs.add(c, models.ConceptTopic, models.EdgeMentions, WeightDeclared)
		}
		for _, c := range m.Domains {
			cs.add(c, models.ConceptDomain, models.EdgeDomain, WeightDeclared)
		}
		for _, c := range m.Triggers {
			cs.add(c, models.ConceptTrigger, models.EdgeTrigger, WeightDeclared)
		}
		if t := m.Triple; t != nil {
			cs.add(t.Subject, models.ConceptEntity, models.EdgeMentions, WeightDeclared)
			cs.add(t.Object, models.ConceptEntity, models.EdgeMentions, WeightDeclared)
		}
		for _, mn := range nlp.ExtractConcepts(m.Content, isKnown, maxConcepts) {
			kind, weight := models.ConceptTopic, WeightMention
			if mn.Kind == "entity" {
				kind, weight = models.ConceptEntity, WeightEntity
			}
			cs.add(mn.Name, kind, models.EdgeMentions, weight)
		}
		w.Concepts = cs.concepts
		for _, e := range cs.edges {
			e.From = m.ID
			w.Edges = append(w.Edges, e)
		}
		// Keep the memory's concept list: what the client gave plus what was extracted.
		m.Concepts = cs.names

		if t := m.Triple; t != nil {
			w.Edges = append(w.Edges, &models.Edge{
				Namespace: ns, From: models.ConceptID(t.Subject), To: models.ConceptID(t.Object),
				Type: models.EdgeRelation, Weight: WeightRelation, Predicate: t.Predicate, Fact: m.ID,
				LastCoOccurred: m.CreatedAt,
			})
		}

		if conv := m.Source.ConversationID; conv != "" {
			prev, ok := last[conv]
			if !ok {
				p, err := s.store.LastInConversation(ctx, ns, conv)
				switch {
				case err == nil:
					prev = p.ID
				case models.ErrorCode(err) != models.ENOTFOUND:
					return err
				}
			}
			if prev != "" {
				w.Edges = append(w.Edges, &models.Edge{
					Namespace: ns, From: prev, To: m.ID, Type: models.EdgeTemporal,
					Weight: WeightTemporal, LastCoOccurred: m.CreatedAt,
				})
			}
			last[conv] = m.ID
		}
	}
	return nil
}

// knownPhrases returns which multi-word phrases of the batch's content are already concepts
// of the namespace, so "ice cream" is matched as one concept once it is known.
func (s *Service) knownPhrases(ctx context.Context, ns string, writes []*models.MemoryWrite) (map[string]bool, error) {
	var phrases []string
	seen := map[string]bool{}
	for _, w := range writes {
		toks := nlp.Tokens(w.Memory.Content)
		for n := 2; n <= 3; n++ {
			for i := 0; i+n <= len(toks) && len(phrases) < maxPhrases*len(writes); i++ {
				p := models.NormalizeConcept(joinTokens(toks[i : i+n]))
				if !seen[p] {
					seen[p] = true
					phrases = append(phrases, p)
				}
			}
		}
	}
	known := map[string]bool{}
	if len(phrases) == 0 {
		return known, nil
	}
	cs, err := s.store.GetConcepts(ctx, ns, phrases)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		known[c.Name] = true
	}
	return known, nil
}

func joinTokens(toks []string) string {
	n := 0
	for _, t := range toks {
		n += len(t) + 1
	}
	b := make([]byte, 0, n)
	for i, t := range toks {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, t...)
	}
	return string(b)
}

// conceptSet collects one memory's concepts and its edges to them, once per concept.
type conceptSet struct {
	ns       string
	at       time.Time
	concepts []*models.Concept
	edges    []*models.Edge
	names    []string
	seen     map[string]int // normalized name → index in edges
}

func newConceptSet(ns string, at time.Time) *conceptSet {
	return &conceptSet{ns: ns, at: at, seen: map[string]int{}}
}

func (cs *conceptSet) add(name string, kind models.ConceptKind, et models.EdgeType, weight float64) {
	n := models.NormalizeConcept(name)
	if n == "" {
		return
	}
	if i, ok := cs.seen[n]; ok {
		// The same concept reached twice (declared and extracted): keep the stronger tie.
		if cs.edges[i].Weight < weight {
			cs.edges[i].Weight = weight
		}
		return
	}
	cs.seen[n] = len(cs.edges)
	cs.names = append(cs.names, n)
	cs.concepts = append(cs.concepts, &models.Concept{
		Namespace: cs.ns, Name: n, Kind: kind, Mentions: 1, FirstSeen: cs.at, LastSeen: cs.at,
	})
	cs.edges = append(cs.edges, &models.Edge{
		Namespace: cs.ns, To: models.ConceptID(n), Type: et, Weight: weight, LastCoOccurred: cs.at,
	})
}
