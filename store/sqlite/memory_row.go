package sqlite

import "github.com/salience-ai/salience/models"

// memoryRow is one row of memories as scanned (memoryRows in tables.go): the JSON lists and
// the embedding raw, every other column already in m.
type memoryRow struct {
	m                            models.Memory
	domains, triggers, concepts  string
	triple, irrelevant, schedule string
	learned                      string
	embedding                    []byte
}

// memory decodes the raw columns into a new Memory, with its embedding.
func (r *memoryRow) memory() (*models.Memory, error) {
	m := r.m
	var err error
	if m.Domains, err = decStrings(r.domains, "domains"); err != nil {
		return nil, err
	}
	if m.Triggers, err = decStrings(r.triggers, "triggers"); err != nil {
		return nil, err
	}
	if m.Concepts, err = decStrings(r.concepts, "concepts"); err != nil {
		return nil, err
	}
	if r.triple != "" {
		m.Triple = new(models.Triple)
		if err := decJSON(r.triple, m.Triple, "triple"); err != nil {
			return nil, err
		}
	}
	if err := decJSON(r.irrelevant, &m.IrrelevantContexts, "irrelevant_contexts"); err != nil {
		return nil, err
	}
	if err := decJSON(r.schedule, &m.Schedule, "schedule"); err != nil {
		return nil, err
	}
	if err := decJSON(r.learned, &m.Learned, "learned"); err != nil {
		return nil, err
	}
	if m.Embedding, err = decVector(r.embedding); err != nil {
		return nil, err
	}
	return &m, nil
}

func scanMemory(sc scanner) (*models.Memory, error) {
	var r memoryRow
	if err := memoryRows.scan(sc, &r); err != nil {
		return nil, err
	}
	return r.memory()
}
