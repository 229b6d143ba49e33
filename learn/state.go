package learn

import (
	"encoding/json"
	"fmt"

	"github.com/salience-ai/salience/models"
)

// Key is the store state key of a namespace's model.
func Key(ns string) string { return models.LearnKeyPrefix + ns }

// Decode reads a model stored by Encode; "" is the prior (a namespace with no events).
// JSON keeps float64s exactly (shortest round-trip form), so a stored model continues as
// the one in memory did.
func Decode(s string, cfg Config) (*Model, error) {
	if s == "" {
		return New(cfg), nil
	}
	// Slices, not the arrays, so that a model stored before a feature existed reads with
	// the prior's weight for it rather than 0 (json fills a short array with zeros).
	var raw struct {
		W       []float64 `json:"w"`
		G       []float64 `json:"g"`
		N       int64     `json:"n"`
		Seq     int64     `json:"seq"`
		Version int       `json:"version"`
	}
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("learn: decode model: %w", err)
	}
	if raw.Version != Version {
		// Weights of another feature set mean nothing here: the prior, from the log's
		// position on (the surfacings of those events do not train this version; Trains).
		m := New(cfg)
		m.Seq = raw.Seq
		return m, nil
	}
	if len(raw.W) > D || len(raw.G) > D {
		return nil, fmt.Errorf("learn: decode model: %d weights, this version has %d features", len(raw.W), D)
	}
	m := &Model{N: raw.N, Seq: raw.Seq, Version: Version}
	m.W = cfg.prior()
	copy(m.W[:], raw.W)
	copy(m.G[:], raw.G)
	return m, nil
}

// Encode writes the model for Decode.
func Encode(m *Model) string {
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("learn: encode model: %v", err)) // arrays of finite floats and ints
	}
	return string(b)
}
