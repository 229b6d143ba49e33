package neo4j

import "github.com/salience-ai/salience/models"

// Tx.GetState and Tx.SetState, which the learning branch adds to the contract as well: when
// both are merged, keep one copy (delete this file if store/neo4j/tx.go has them).

const (
	// txGetStateLocked write-locks the value it reads (creating the node when missing), so a
	// concurrent read-modify-write of the same key waits for this transaction.
	txGetStateLocked = `MERGE (s:State {key: $key}) SET s.lk = NOT coalesce(s.lk, false) RETURN coalesce(s.value, '') AS value`
)

func (t *storeTx) GetState(key string) (string, error) {
	if t.done {
		return "", errTxDone
	}
	if key == "" {
		return "", models.Invalid("key", "key is required")
	}
	recs, err := collect(t.ctx, t.tx, txGetStateLocked, map[string]any{"key": key})
	if err != nil {
		return "", t.wrap(err, "get state")
	}
	v, _ := recs[0].Values[0].(string)
	return v, nil
}

func (t *storeTx) SetState(key, value string) error {
	if t.done {
		return errTxDone
	}
	if key == "" {
		return models.Invalid("key", "key is required")
	}
	return t.wrap(exec(t.ctx, t.tx, setState, map[string]any{"key": key, "value": value}), "set state")
}
