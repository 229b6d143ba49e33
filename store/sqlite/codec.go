package sqlite

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	// Lists of strings — ids, terms, concept names — are written directly, the bytes
	// encoding/json writes (FuzzEncJSONLists): a conversation's recent_surfaced, two
	// hundred ids rewritten every turn, cost tens of microseconds through reflection.
	switch x := any(v).(type) {
	case []string:
		return string(appendJSONList(make([]byte, 0, listLen(x)), x))
	case [][]string:
		n := 2
		for _, l := range x {
			n += listLen(l) + 1
		}
		b := append(make([]byte, 0, n), '[')
		for i, l := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONList(b, l)
		}
		return string(append(b, ']'))
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Only lists of strings, times and plain structs are encoded: cannot fail.
		panic(fmt.Sprintf("sqlite: encode %T: %v", v, err))
	}
	return string(b)
}

func encStrings(v []string) string { return encJSON(v, len(v) == 0) }

// listLen is the length of l as JSON when its strings need no escaping.
func listLen(l []string) int {
	n := 2
	for _, s := range l {
		n += len(s) + 3
	}
	return n
}

// appendJSONList appends l as encoding/json writes it, "null" for a nil list.
func appendJSONList(b []byte, l []string) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// decJSON decodes a JSON text column into v; "" leaves v zero.
func decJSON(s string, v any, column string) error {
	if s == "" {
		return nil
	}
	err := json.Unmarshal([]byte(s), v)
	if err != nil && column != "" { // scan destinations leave the column's name to database/sql
		return fmt.Errorf("decode column %s: %w", column, err)
	}
	return err
}

// decStrings decodes a JSON list of strings. Lists are written by encStrings, so a fast
// path handles the common case of strings without escapes; anything else goes to
// encoding/json.
func decStrings(s, column string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	if out, ok := fastStrings(s); ok {
		return out, nil
	}
	var out []string
	if err := decJSON(s, &out, column); err != nil {
		return nil, err
	}
	return out, nil
}

// fastStrings parses ["a","b"] when no string holds a backslash or control character and
// the text is valid UTF-8 (encoding/json would replace invalid bytes).
func fastStrings(s string) ([]string, bool) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, false
	}
	body := s[1 : len(s)-1]
	if !utf8.ValidString(body) {
		return nil, false
	}
	if body == "" {
		return []string{}, true
	}
	// Sized exactly (two quotes a string, when the text is well formed): appending would
	// leave up to half of each backing array spare, in every cached memory's lists.
	out := make([]string, 0, strings.Count(body, `"`)/2)
	for i := 0; i < len(body); {
		if body[i] != '"' {
			return nil, false
		}
		j := i + 1
		for j < len(body) && body[j] != '"' {
			if c := body[j]; c == '\\' || c < 0x20 {
				return nil, false
			}
			j++
		}
		if j >= len(body) {
			return nil, false
		}
		out = append(out, body[i+1:j])
		i = j + 1
		if i == len(body) {
			break
		}
		if body[i] != ',' || i+1 == len(body) {
			return nil, false
		}
		i++
	}
	return out, true
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
func queryAll[T any](ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (rowReader, error)
}, what, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, wrap(err, what)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, wrap(err, what)
		}
		out = append(out, v)
	}
	return out, wrap(rows.Err(), what)
}

// encLearned encodes a memory's learned words exactly as encJSON would — the column is read
// back with encoding/json — without reflection: engagement rewrites the column of every
// memory an event touches, and encoding/json was most of PutMemory's own cost.
func encLearned(ls []models.LearnedTerm) string {
	if len(ls) == 0 {
		return ""
	}
	b := make([]byte, 0, len(ls)*56)
	b = append(b, '[')
	for i := range ls {
		l := &ls[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"t":`...)
		b = appendJSONString(b, l.Term)
		b = append(b, `,"w":`...)
		var ok bool
		if b, ok = appendJSONFloat(b, l.Weight); !ok {
			return encJSON(ls, false) // panics with encoding/json's own error
		}
		b = append(b, `,"at":`...)
		if y := l.At.Year(); y < 0 || y > 9999 {
			return encJSON(ls, false) // encoding/json refuses these years; so would Time.MarshalJSON
		}
		b = append(b, '"')
		b = l.At.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"', '}')
	}
	return string(append(b, ']'))
}

// appendJSONString appends s as encoding/json writes it: plain printable ASCII as it is,
// anything else (quotes, backslashes, HTML characters, control characters, non-ASCII)
// through encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !jsonPlain[s[i]] {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jsonPlain marks the bytes encoding/json writes as they are in a string: printable ASCII
// but the quote, the backslash and the HTML characters <, > and &.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c <= 0x7e; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONFloat appends f as encoding/json writes a float64; false for NaN and
// infinities, which it refuses.
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// encoding/json writes e-7, not e-07.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}
