package learn

import (
	"encoding/json"
	"fmt"
)

// Key is the store state key of a namespace's model.
func Key(ns string) string { return "learn/model/" + ns }

// Decode reads a model stored by Encode; "" is the prior (a namespace with no events).
// JSON keeps float64s exactly (shortest round-trip form), so a stored model continues as
// the one in memory did.
func Decode(s string, cfg Config) (*Model, error) {
	if s == "" {
		return New(cfg), nil
	}
	m := &Model{}
	if err := json.Unmarshal([]byte(s), m); err != nil {
		return nil, fmt.Errorf("learn: decode model: %w", err)
	}
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
