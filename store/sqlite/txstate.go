package sqlite

import (
	"database/sql"
	"errors"

	"github.com/salience-ai/salience/models"
)

// Tx.GetState and Tx.SetState, which the learning branch adds to the contract as well: when
// both are merged, keep one copy (delete this file if store/sqlite/tx.go has them).

// GetState and SetState are the store's state inside the transaction.
func (t *storeTx) GetState(key string) (string, error) {
	if t.done {
		return "", errTxDone
	}
	if key == "" {
		return "", models.Invalid("key", "key is required")
	}
	var v string
	err := t.tx.QueryRowContext(t.ctx, `SELECT value FROM state WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, wrap(err, "get state")
}

func (t *storeTx) SetState(key, value string) error {
	if t.done {
		return errTxDone
	}
	if key == "" {
		return models.Invalid("key", "key is required")
	}
	_, err := t.tx.ExecContext(t.ctx, `INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	return wrap(err, "set state")
}
