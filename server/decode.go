package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/salience-ai/salience/models"
)

// readBody reads the whole request body. The body-size middleware has wrapped it in an
// http.MaxBytesReader, so a body over the limit is ETOOLARGE here.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &mb):
		return nil, &models.Error{Code: models.ETOOLARGE, Message: fmt.Sprintf("request body is over the limit of %d bytes", mb.Limit)}
	case err != nil:
		return nil, models.Invalid("", "could not read the request body")
	}
	return b, nil
}

// decodeStrict decodes body, which must hold exactly one JSON value, into v (a pointer to one
// of the api request types). Unknown fields are errors. Every error is EINVALID and says
// what is wrong where: the JSON path of the field ("memories[3].content"), or the byte offset
// of a syntax error.
func decodeStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return models.Invalid("", "request body is empty: send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	// Decode reads one whole JSON value before it fills v, so syntax errors are found
	// before type errors.
	if err := dec.Decode(v); err != nil {
		return decodeError(err, body, reflect.TypeOf(v).Elem())
	}
	if _, err := dec.Token(); err != io.EOF {
		return models.Invalid("", "request body must hold exactly one JSON value; found more after byte offset %d", dec.InputOffset())
	}
	if err := checkRaw(body); err != nil {
		return err
	}
	// An explicit zero time decodes as "not given" (every time field is omitzero), so
	// "created_at": "0001-01-01T00:00:00Z" would silently mean now. locate names it. Every
	// RFC 3339 spelling of the zero instant starts with one of these dates.
	// So would an array's null element decode as its zero value; locate names that too.
	if bytes.Contains(body, []byte(`"0001-01-01`)) || bytes.Contains(body, []byte(`"0000-12-31`)) || bytes.Contains(body, []byte("null")) {
		if field, msg, ok := locate(reflect.TypeOf(v).Elem(), body, ""); ok {
			return models.Invalid(field, "%s", msg)
		}
	}
	return nil
}

// decodeError rewrites an encoding/json error as an EINVALID error naming the field.
func decodeError(err error, body []byte, t reflect.Type) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return models.Invalid("", "malformed JSON at byte offset %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return models.Invalid("", "malformed JSON: the body ends before the JSON value does")
	}
	// The value is well-formed JSON that does not fit t. encoding/json names unknown fields
	// without their path and type errors without array indexes, and errors of
	// json.Unmarshalers (time.Time) without any field, so walk the value to find the culprit.
	if field, msg, ok := locate(t, body, ""); ok {
		return models.Invalid(field, "%s", msg)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return models.Invalid(te.Field, "%s must be %s, not %s", fieldLabel(te.Field), typeName(te.Type), te.Value)
	}
	return models.Invalid("", "request body does not match the expected shape")
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// maxLocateDepth bounds the walk; the api types are a few levels deep.
const maxLocateDepth = 32

// locate walks raw alongside type t and reports the first place (in document order) where
// raw does not fit t: its JSON path, a message, and true. It reports false when it finds
// nothing.
func locate(t reflect.Type, raw []byte, path string) (string, string, bool) {
	return locateDepth(t, raw, path, 0)
}

func locateDepth(t reflect.Type, raw []byte, path string, depth int) (string, string, bool) {
	if depth > maxLocateDepth {
		return "", "", false
	}
	raw = bytes.TrimSpace(raw)
	isNull := string(raw) == "null"
	for t.Kind() == reflect.Pointer {
		if isNull {
			return "", "", false
		}
		t = t.Elem()
	}
	if t == timeType {
		if isNull {
			return "", "", false
		}
		var tm time.Time
		if err := json.Unmarshal(raw, &tm); err != nil {
			return path, fmt.Sprintf("%s must be an RFC 3339 time such as \"2024-05-01T14:30:00Z\", not %s", fieldLabel(path), describe(raw)), true
		}
		if tm.IsZero() {
			return path, fmt.Sprintf("%s is %s, the zero time, which stands for no time: leave the field out (or send null) instead", fieldLabel(path), describe(raw)), true
		}
		return "", "", false
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
			return path, fmt.Sprintf("%s is not valid", fieldLabel(path)), true
		}
		return "", "", false
	}
	switch t.Kind() {
	case reflect.Struct:
		if isNull {
			return "", "", false
		}
		if len(raw) == 0 || raw[0] != '{' {
			return path, fmt.Sprintf("%s must be an object, not %s", fieldLabel(path), describe(raw)), true
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		if _, err := dec.Token(); err != nil { // '{'
			return "", "", false
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return "", "", false
			}
			key, _ := tok.(string)
			var val json.RawMessage
			if err := dec.Decode(&val); err != nil {
				return "", "", false
			}
			f, ok := fieldByJSONName(t, key)
			if !ok {
				key = models.Clip(key, 100) // the name goes back to the caller and into logs
				return join(path, key), fmt.Sprintf("unknown field %q", key), true
			}
			if field, msg, ok := locateDepth(f.Type, val, join(path, key), depth+1); ok {
				return field, msg, true
			}
		}
		return "", "", false
	case reflect.Map:
		// Maps keyed by name (settings' weights per mode): each value's path is map.key.
		if isNull || t.Key().Kind() != reflect.String {
			break
		}
		if len(raw) == 0 || raw[0] != '{' {
			return path, fmt.Sprintf("%s must be an object, not %s", fieldLabel(path), describe(raw)), true
		}
		var items map[string]json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return "", "", false
		}
		keys := make([]string, 0, len(items))
		for k := range items {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the same field every time
		for _, k := range keys {
			if field, msg, ok := locateDepth(t.Elem(), items[k], join(path, models.Clip(k, 100)), depth+1); ok {
				return field, msg, true
			}
		}
		return "", "", false
	case reflect.Slice, reflect.Array:
		if isNull {
			return "", "", false
		}
		if len(raw) == 0 || raw[0] != '[' {
			return path, fmt.Sprintf("%s must be an array, not %s", fieldLabel(path), describe(raw)), true
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return "", "", false
		}
		for i, item := range items {
			p := fmt.Sprintf("%s[%d]", path, i)
			// encoding/json decodes a null element into the zero value: [null] would be
			// [""], a value the client never sent.
			if k := t.Elem().Kind(); string(bytes.TrimSpace(item)) == "null" && k != reflect.Pointer && k != reflect.Interface {
				return p, fmt.Sprintf("%s must be %s, not null", fieldLabel(p), typeName(t.Elem())), true
			}
			if field, msg, ok := locateDepth(t.Elem(), item, p, depth+1); ok {
				return field, msg, true
			}
		}
		return "", "", false
	}
	if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
		return path, fmt.Sprintf("%s must be %s, not %s", fieldLabel(path), typeName(t), describe(raw)), true
	}
	return "", "", false
}

// fieldByJSONName finds the struct field a JSON key decodes into, as encoding/json does:
// an exact match of the tag name first, then a case-insensitive one.
func fieldByJSONName(t reflect.Type, key string) (reflect.StructField, bool) {
	var fold reflect.StructField
	found := false
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f, true
		}
		if !found && strings.EqualFold(name, key) {
			fold, found = f, true
		}
	}
	return fold, found
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldLabel names a field in a message; the top level is "the body".
func fieldLabel(path string) string {
	if path == "" {
		return "the body"
	}
	return path
}

// typeName says in JSON terms what a Go type expects.
func typeName(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a value"
	}
	if t == timeType {
		return "an RFC 3339 time"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a value"
}

// describe says what a JSON value is, briefly, for error messages.
func describe(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		if len(raw) > 42 {
			return "the string " + string(raw[:40]) + "…\""
		}
		return "the string " + string(raw)
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if len(raw) > 40 {
		return "the number " + string(raw[:40]) + "…"
	}
	return "the number " + string(raw)
}
