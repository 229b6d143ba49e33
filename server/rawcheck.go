package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/salience-ai/salience/models"
)

// checkRaw walks a well-formed JSON body (the decoder has accepted it) and rejects what
// encoding/json lets through silently, naming the field:
//   - a key given twice in one object, where the last would win. Keys are compared ignoring
//     case, as encoding/json matches them to struct fields ("kind" and "Kind" set the same
//     field); no request type has a map, whose keys could legitimately differ in case only;
//   - a string that is not valid UTF-8, or a \u escape of a lone UTF-16 surrogate: the
//     decoder would replace either with U+FFFD and store text the client never sent.
func checkRaw(body []byte) error {
	s := rawScanner{b: body}
	return s.value()
}

// rawScanner is a recursive-descent walk over well-formed JSON. It keeps the path to the
// current value as a stack and renders it ("memories[3].content") only for an error.
type rawScanner struct {
	b    []byte
	i    int
	path []rawSeg
}

// rawSeg is one step of a path: an object key, or an array index.
type rawSeg struct {
	key   []byte
	idx   int
	index bool
}

// maxLinearKeys is how many keys an object may have before duplicates are found through a
// map instead of comparing each new key with all earlier ones.
const maxLinearKeys = 16

func (s *rawScanner) value() error {
	s.ws()
	switch s.b[s.i] {
	case '{':
		return s.object()
	case '[':
		return s.array()
	case '"':
		_, err := s.str(false)
		return err
	}
	for s.i < len(s.b) && !isDelim(s.b[s.i]) { // a number, true, false or null
		s.i++
	}
	return nil
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func (s *rawScanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *rawScanner) object() error {
	s.i++ // '{'
	s.ws()
	if s.b[s.i] == '}' {
		s.i++
		return nil
	}
	var keys [][]byte
	var folded map[string]bool
	for {
		s.ws()
		key, err := s.str(true)
		if err != nil {
			return err
		}
		dup := false
		if folded == nil {
			for _, k := range keys {
				if bytes.EqualFold(k, key) {
					dup = true
					break
				}
			}
			keys = append(keys, key)
			if len(keys) > maxLinearKeys {
				folded = make(map[string]bool, 2*len(keys))
				for _, k := range keys {
					folded[strings.ToLower(string(k))] = true
				}
			}
		} else {
			f := strings.ToLower(string(key))
			dup = folded[f]
			folded[f] = true
		}
		s.path = append(s.path, rawSeg{key: key})
		if dup {
			field := s.pathString()
			return models.Invalid(field, "%s is given more than once: each key may appear once in an object (keys differing only in case are the same field)", field)
		}
		s.ws()
		s.i++ // ':'
		if err := s.value(); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		s.ws()
		c := s.b[s.i]
		s.i++ // ',' or '}'
		if c == '}' {
			return nil
		}
	}
}

func (s *rawScanner) array() error {
	s.i++ // '['
	s.ws()
	if s.b[s.i] == ']' {
		s.i++
		return nil
	}
	for n := 0; ; n++ {
		s.path = append(s.path, rawSeg{idx: n, index: true})
		if err := s.value(); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		s.ws()
		c := s.b[s.i]
		s.i++ // ',' or ']'
		if c == ']' {
			return nil
		}
	}
}

// str scans a string at s.i and returns its content: the raw bytes between the quotes, or
// the unescaped text when it has escapes (keys are compared by what they decode to).
func (s *rawScanner) str(key bool) ([]byte, error) {
	s.i++ // opening quote
	start := s.i
	escaped := false
	for {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if !escaped {
				return raw, nil
			}
			return s.unescape(raw, key)
		case c == '\\':
			escaped = true
			s.i += 2 // the escape's letter; \u's hex digits are plain bytes to this loop
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n == 1 {
				return nil, s.invalidUTF8(s.i, key)
			}
			s.i += n
		}
	}
}

// unescape checks the \u escapes of a string (a high surrogate must be followed by a low
// one, a low one must follow a high one) and returns the decoded text.
func (s *rawScanner) unescape(raw []byte, key bool) ([]byte, error) {
	for j := 0; j < len(raw); j++ {
		if raw[j] != '\\' {
			continue
		}
		j++
		if raw[j] != 'u' {
			continue
		}
		r := hex4(raw[j+1:])
		j += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return nil, s.lonesurrogate(key)
		case r >= 0xD800 && r <= 0xDBFF:
			if j+6 >= len(raw) || raw[j+1] != '\\' || raw[j+2] != 'u' {
				return nil, s.lonesurrogate(key)
			}
			if lo := hex4(raw[j+3:]); lo < 0xDC00 || lo > 0xDFFF {
				return nil, s.lonesurrogate(key)
			}
			j += 6
		}
	}
	var out string
	if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &out); err != nil {
		return raw, nil // cannot happen for a string the decoder accepted; compare raw bytes
	}
	return []byte(out), nil
}

// hex4 parses 4 hex digits (the decoder has checked them).
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(n)
}

// invalidUTF8 names the string being scanned; for a key, the object holding it.
func (s *rawScanner) invalidUTF8(offset int, key bool) error {
	field := s.pathString()
	return models.Invalid(field, "%s is not valid UTF-8 (byte offset %d): send text as UTF-8", s.what(field, key), offset)
}

func (s *rawScanner) lonesurrogate(key bool) error {
	field := s.pathString()
	return models.Invalid(field, "%s has a \\u escape of a lone UTF-16 surrogate, which is not a character", s.what(field, key))
}

func (s *rawScanner) what(field string, key bool) string {
	if key {
		return "a key of " + fieldLabel(field)
	}
	return fieldLabel(field)
}

// pathString renders the path as the rest of the server names fields: "memories[3].content".
// Keys are clipped and made valid UTF-8, since the path goes back to the client and into logs.
func (s *rawScanner) pathString() string {
	var b strings.Builder
	for _, seg := range s.path {
		if seg.index {
			fmt.Fprintf(&b, "[%d]", seg.idx)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(models.Clip(strings.ToValidUTF8(string(seg.key), "\uFFFD"), 100))
	}
	return b.String()
}
