package models

import (
	"cmp"
	"strings"
	"time"
	"unicode"
)

// ConceptKind says what a concept node stands for.
type ConceptKind string

const (
	ConceptEntity  ConceptKind = "entity"
	ConceptTopic   ConceptKind = "topic"
	ConceptDomain  ConceptKind = "domain"
	ConceptTrigger ConceptKind = "trigger"
)

// Concept is an entity or topic node of a namespace's graph. Its node id is ConceptID(Name).
type Concept struct {
	Namespace string      `json:"namespace"`
	Name      string      `json:"name"` // normalized: NormalizeConcept
	Kind      ConceptKind `json:"kind"`
	Aliases   []string    `json:"aliases,omitempty"`
	Mentions  int         `json:"mentions"`
	FirstSeen time.Time   `json:"first_seen"`
	LastSeen  time.Time   `json:"last_seen"`
}

// ConceptPrefix starts every concept node id; memory ids (ULIDs) never contain ':'.
const ConceptPrefix = "c:"

// ConceptID returns the graph node id of a concept name.
func ConceptID(name string) string { return ConceptPrefix + NormalizeConcept(name) }

// IsConceptID reports whether a node id names a concept (else it names a memory).
func IsConceptID(id string) bool { return strings.HasPrefix(id, ConceptPrefix) }

// NormalizeConcept lower-cases a concept name, trims it and folds runs of white space and
// punctuation other than '-', '\” and '&' to one space.
// It is the one normalisation of concept names: nlp returns names already in this form.
func NormalizeConcept(name string) string {
	if plainName(name) {
		return name // the common case, without an allocation
	}
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '\'' || r == '&' {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			continue
		}
		space = true
	}
	return b.String()
}

// ConceptNames normalizes names (NormalizeConcept) and returns each non-empty one once, in the
// order given: the concepts a store's GetConcepts looks up.
func ConceptNames(names []string) []string {
	out := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if n = NormalizeConcept(n); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// EdgeType is the kind of a graph edge.
type EdgeType string

const (
	EdgeMentions    EdgeType = "mentions"     // memory → concept it mentions
	EdgeDomain      EdgeType = "domain"       // memory → domain concept
	EdgeTrigger     EdgeType = "trigger"      // memory → trigger concept
	EdgeConcept     EdgeType = "concept"      // concept ↔ concept, learned from engagement context
	EdgeTemporal    EdgeType = "temporal"     // memory → the next memory of its conversation
	EdgeCoRetrieved EdgeType = "co_retrieved" // memory ↔ memory used in the same turn
	EdgeRelation    EdgeType = "relation"     // concept → concept from a fact's triple
)

// Edge is a weighted graph edge between two nodes (memory ids or concept ids). Edges are
// stored once per (From, To, Type) and traversed in both directions.
type Edge struct {
	Namespace      string    `json:"namespace"`
	From           string    `json:"from"`
	To             string    `json:"to"`
	Type           EdgeType  `json:"type"`
	Weight         float64   `json:"weight"` // 0..1
	CoOccurrences  int       `json:"co_occurrences"`
	LastCoOccurred time.Time `json:"last_co_occurred,omitzero"`
	LastDecayed    time.Time `json:"last_decayed,omitzero"`
	Predicate      string    `json:"predicate,omitempty"` // relation edges
	Fact           string    `json:"fact,omitempty"`      // relation edges: the memory id of the fact
}

// EdgeKey identifies an edge.
type EdgeKey struct {
	From, To string
	Type     EdgeType
}

// Compare orders edge keys as both stores list edges (ScanEdges, Neighbors): by From, then
// To, then Type, byte-wise.
func (k EdgeKey) Compare(o EdgeKey) int {
	if c := cmp.Compare(k.From, o.From); c != 0 {
		return c
	}
	if c := cmp.Compare(k.To, o.To); c != 0 {
		return c
	}
	return cmp.Compare(k.Type, o.Type)
}

// CompareStrongest orders edges strongest first, equal weights in key order: a node's
// edges in StrongestNeighbors.
func CompareStrongest(a, b *Edge) int {
	if a.Weight != b.Weight {
		return cmp.Compare(b.Weight, a.Weight)
	}
	return a.Key().Compare(b.Key())
}

// Key returns the edge's identity.
func (e *Edge) Key() EdgeKey { return EdgeKey{From: e.From, To: e.To, Type: e.Type} }

// Other returns the end of e that is not id.
func (e *Edge) Other(id string) string {
	if e.From == id {
		return e.To
	}
	return e.From
}

// plainName reports whether name is already normalized and ASCII: lower-case letters,
// digits, hyphens, apostrophes and '&' in runs separated by single spaces.
func plainName(name string) bool {
	if name == "" || name[0] == ' ' || name[len(name)-1] == ' ' {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '\'', c == '&':
		case c == ' ' && name[i-1] != ' ':
		default:
			return false
		}
	}
	return true
}
