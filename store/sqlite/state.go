package sqlite

import (
	"context"
	"errors"

	"github.com/salience-ai/salience/models"
)

const upsertState = `INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`

// putState writes key's value in the transaction.
func (w *wtx) putState(ctx context.Context, key, value string) error {
	_, err := w.ExecContext(ctx, upsertState, key, value)
	return err
}

// GetState returns the value of key, "" when missing.
func (s *Store) GetState(ctx context.Context, key string) (string, error) {
	if key == "" {
		return "", models.Invalid("key", "key is required")
	}
	var v string
	err := s.rdb.QueryRowContext(ctx, `SELECT value FROM state WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, errNoRows) {
		return "", nil
	}
	return v, wrap(err, "get state")
}

// SetState stores value under key.
func (s *Store) SetState(ctx context.Context, key, value string) error {
	if key == "" {
		return models.Invalid("key", "key is required")
	}
	return s.write(ctx, "set state", func(tx *wtx) (func(), error) {
		return nil, tx.putState(ctx, key, value)
	})
}
