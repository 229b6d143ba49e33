package sqlite

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/salience-ai/salience/models"
)

// Times: the stores' one codec (models.EncodeTime). noTime, the zero time, was 0 until
// migration 0009 (migrations/0009_no_time.sql spells it -9223372036854775807 - 1), which made
// the Unix epoch itself read back as unset.
const noTime = models.NoTime

var (
	encTime    = models.EncodeTime
	decTime    = models.DecodeTime
	filterTime = models.FilterTime
)

// encJSON encodes a list or struct field as JSON text, "" for an empty value (so empty
// lists cost nothing to store or decode).
func encJSON[T any](v T, empty bool) string {
	if empty {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Only lists of strings, times and plain structs are encoded: cannot fail.
		panic(fmt.Sprintf("sqlite: encode %T: %v", v, err))
	}
	return string(b)
}

func encStrings(v []string) string { return encJSON(v, len(v) == 0) }

// inList is `IN` followed by it matches the strings of one argument, jsonList's: one
// statement whatever the list's length, so every statement the store runs has one of a
// bounded set of texts, each kept prepared on its connection (conn.go).
const inList = `(SELECT value FROM json_each(?))`

// jsonList is a list of strings as JSON, for inList.
func jsonList(v []string) string { return encJSON(v, false) }

// decJSON decodes a JSON text column into v; "" leaves v zero.
func decJSON(s string, v any, column string) error {
	if s == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("decode column %s: %w", column, err)
	}
	return nil
}

// decStrings decodes a JSON list of strings.
func decStrings(s, column string) (out []string, err error) {
	return out, decJSON(s, &out, column)
}

// encVector stores an embedding as little-endian float32s; nil for none.
func encVector(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decVector(b []byte) ([]float32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("embedding blob of %d bytes is not a float32 vector", len(b))
	}
	v := make([]float32, len(b)/4)
	decVectorInto(v, b)
	return v, nil
}

// decVectorInto decodes len(v) little-endian float32s from b.
func decVectorInto(v []float32, b []byte) {
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// queryAll runs a query and scans every row with scan; errors are wrapped with what.
func queryAll[T any](ctx context.Context, q querier, what, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	var out []T
	for r, err := range rowsOf(q.QueryContext(ctx, query, args...)) {
		var v T
		if err == nil {
			v, err = scan(r)
		}
		if err != nil {
			return nil, wrap(err, what)
		}
		out = append(out, v)
	}
	return out, nil
}
