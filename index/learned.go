package index

import (
	"strings"
	"sync"

	"github.com/salience-ai/salience/models"
)

// Learned is the text index's learned field: the words a memory became findable by because
// a turn that used it had them (feedback expansion, package learn), each with a weight. It is
// searched together with BM25 (Search's learned argument); a memory is in it only once it
// has been used, so a namespace without engagement searches exactly as before.
type Learned struct {
	mu     sync.RWMutex
	byTerm map[string]map[string]float64 // term → memory id → weight
	byDoc  map[string][]string           // memory id → its terms, to remove them
}

// NewLearned returns an empty learned field.
func NewLearned() *Learned {
	return &Learned{byTerm: map[string]map[string]float64{}, byDoc: map[string][]string{}}
}

// Set replaces the learned terms of id (none: removes it).
func (x *Learned) Set(id string, terms []models.LearnedTerm) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(id)
	if len(terms) == 0 {
		return
	}
	// The field keeps copies of the strings it is given: a caller's may share the bytes of
	// something larger (an unpacked memory's share its packed row), which the field would
	// otherwise keep alive for as long as it holds the word.
	id = strings.Clone(id)
	ts := make([]string, 0, len(terms))
	for _, t := range terms {
		if t.Weight <= 0 || t.Weight != t.Weight {
			continue
		}
		term := strings.Clone(t.Term)
		docs := x.byTerm[term]
		if docs == nil {
			docs = map[string]float64{}
			x.byTerm[term] = docs
		}
		docs[id] = t.Weight
		ts = append(ts, term)
	}
	x.byDoc[id] = ts
}

// Remove drops id; a missing id is ignored.
func (x *Learned) Remove(id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.removeLocked(id)
}

func (x *Learned) removeLocked(id string) {
	for _, t := range x.byDoc[id] {
		docs := x.byTerm[t]
		delete(docs, id)
		if len(docs) == 0 {
			delete(x.byTerm, t)
		}
	}
	delete(x.byDoc, id)
}

// Len returns the number of memories with learned terms.
func (x *Learned) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.byDoc)
}

// scores adds to acc, for each memory with learned terms among the query's (each distinct
// term once), Σ weight·idf(term); idf is the content index's (BM25.idf: the namespace's idf
// times the general prior), so that a word common in the namespace or in English leads
// nowhere in particular.
func (x *Learned) scores(terms []string, idf func(string) float64, acc map[string]float64) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.byDoc) == 0 {
		return
	}
	for i, t := range terms {
		docs := x.byTerm[t]
		if len(docs) == 0 || contains(terms[:i], t) {
			continue
		}
		w := idf(t)
		for id, wt := range docs {
			acc[id] += wt * w
		}
	}
}

func contains(ts []string, t string) bool {
	for _, u := range ts {
		if u == t {
			return true
		}
	}
	return false
}
