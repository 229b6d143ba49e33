package ingest

import (
	"context"
	"math"
	"time"

	"github.com/salience-ai/salience/models"
)

// Edit is what a client may change of a stored memory: the fields that weigh it in recall
// and say when it holds. Its content, kind, source and lists do not change: a memory whose
// content changed is a new memory (store it, and delete the old one), because its vector,
// terms, concepts and edges all follow from the content.
type Edit struct {
	Importance float64   // 0..1
	ValidAt    time.Time // zero: true since it was created
	InvalidAt  time.Time // zero: still true
	Sensitive  bool
}

// EditOf returns m's editable fields.
func EditOf(m *models.Memory) Edit {
	return Edit{Importance: m.Importance, ValidAt: m.ValidAt, InvalidAt: m.InvalidAt, Sensitive: m.Sensitive}
}

// validate checks e as Ingest checks the same fields of a new memory.
func (e Edit) validate() error {
	if e.Importance < 0 || e.Importance > 1 || math.IsNaN(e.Importance) {
		return models.Invalid("importance", "importance must be between 0 and 1")
	}
	m := &models.Memory{ValidAt: e.ValidAt, InvalidAt: e.InvalidAt}
	if err := validateTimes(m); err != nil {
		return err
	}
	if !e.ValidAt.IsZero() && !e.InvalidAt.IsZero() && !e.InvalidAt.After(e.ValidAt) {
		return models.Invalid("invalid_at", "invalid_at must be after valid_at")
	}
	return nil
}

// Edit changes the memory id of ns (a chunk's id edits its memory, whose chunks follow) in
// one store transaction: change gets its editable fields as stored and returns the new ones,
// which are validated as Ingest validates them. It returns the memory as stored after the
// edit, without its embedding. ENOTFOUND when there is no such memory; change's error as it
// is.
func (s *Service) Edit(ctx context.Context, ns, id string, change func(Edit) (Edit, error)) (*models.Memory, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	var out *models.Memory
	err := s.store.Update(ctx, func(tx models.Tx) error {
		m, err := tx.GetMemory(ns, id)
		if err != nil {
			return err
		}
		if m.IsChunk() {
			if m, err = tx.GetMemory(ns, m.ParentID); err != nil {
				return err
			}
		}
		e, err := change(EditOf(m))
		if err != nil {
			return err
		}
		if err := e.validate(); err != nil {
			return err
		}
		m.Importance, m.ValidAt, m.InvalidAt, m.Sensitive = e.Importance, utc(e.ValidAt), utc(e.InvalidAt), e.Sensitive
		if err := tx.EditMemory(m); err != nil {
			return err
		}
		m.Embedding = nil
		out = m
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// utc returns t in UTC; the zero time stays zero.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}
