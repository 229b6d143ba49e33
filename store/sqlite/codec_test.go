package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func TestDecStrings(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{``, nil},
		{`[]`, []string{}},
		{`["a"]`, []string{"a"}},
		{`["a","b c","Zürich"]`, []string{"a", "b c", "Zürich"}},
		{`["quote \"x\"","tab\t"]`, []string{`quote "x"`, "tab\t"}}, // escapes: encoding/json's path
		{`["\u003c"]`, []string{"<"}},
	}
	for _, tt := range tests {
		got, err := decStrings(tt.in, "col")
		if err != nil || !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Fatalf("decStrings(%s) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{`[`, `["a",]`, `["a" "b"]`, `[1]`, `{"a":1}`, `["a`} {
		if got, err := decStrings(bad, "col"); err == nil {
			t.Fatalf("decStrings(%s) = %q, want an error", bad, got)
		}
	}
}

func TestTimeCodec(t *testing.T) {
	for _, tm := range []time.Time{
		{}, time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC),
		time.Date(2026, 5, 1, 14, 0, 0, 0, time.FixedZone("CEST", 7200)),
		time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got := decTime(encTime(tm)); !got.Equal(tm) || (!tm.IsZero() && got.Location() != time.UTC) {
			t.Fatalf("time %v came back as %v", tm, got)
		}
		if err := models.CheckStoredTime("t", tm); err != nil {
			t.Fatalf("CheckStoredTime(%v): %v", tm, err)
		}
	}
	for _, tm := range []time.Time{time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if models.CheckStoredTime("t", tm) == nil {
			t.Fatalf("CheckStoredTime accepted %v, which unix nanoseconds cannot hold", tm)
		}
	}
	if a, b := filterTime(time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)), filterTime(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)); a >= b || a > 0 || b < 0 {
		t.Fatalf("out-of-range filter bounds clamp to %d, %d", a, b)
	}
}

// FuzzDecStrings checks the fast list decoder against encoding/json: whenever the fast path
// accepts an input, encoding/json decodes it to the same list; and every list survives
// encStrings → decStrings.
func FuzzDecStrings(f *testing.F) {
	for _, s := range []string{``, `[]`, `["a"]`, `["a","b"]`, `["a",]`, `[""]`, `["\"",""]`, `["é","\u2028"]`, `[,]`, `["a""b"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if fast, ok := fastStrings(s); ok {
			var want []string
			if err := json.Unmarshal([]byte(s), &want); err != nil {
				t.Fatalf("fast path accepted %q, which is not JSON: %v", s, err)
			}
			if !slices.Equal(fast, want) {
				t.Fatalf("fast path decoded %q as %q, encoding/json as %q", s, fast, want)
			}
		}
		got, err := decStrings(s, "col")
		var want []string
		jerr := json.Unmarshal([]byte(s), &want)
		if s != "" && (err == nil) != (jerr == nil) {
			t.Fatalf("decStrings(%q) error %v, encoding/json %v", s, err, jerr)
		}
		if err == nil && s != "" && !slices.Equal(got, want) {
			t.Fatalf("decStrings(%q) = %q, want %q", s, got, want)
		}

		// Round trip: any list of (valid UTF-8) strings built from the input.
		list := []string{s, "", s + s}
		var canon []string
		_ = json.Unmarshal(mustJSON(t, list), &canon) // invalid UTF-8 becomes U+FFFD, as stored
		back, err := decStrings(encStrings(list), "col")
		if err != nil || !slices.Equal(back, canon) {
			t.Fatalf("round trip of %q gave %q, %v", list, back, err)
		}
	})
}

func mustJSON(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzDecVector checks that any blob either is rejected (not a whole number of float32s) or
// decodes to floats that encode back to the same bytes, NaN payloads included.
func FuzzDecVector(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 128, 63})
	f.Add([]byte{0, 0, 192, 127, 1, 2, 3})
	f.Add(encVector([]float32{0.6, 0.8, float32(math.Inf(-1))}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decVector(b)
		if len(b)%4 != 0 {
			if err == nil {
				t.Fatalf("a %d-byte blob decoded", len(b))
			}
			return
		}
		if err != nil || len(v) != len(b)/4 {
			t.Fatalf("decVector(%d bytes) = %d floats, %v", len(b), len(v), err)
		}
		if back := encVector(v); !bytes.Equal(back, b) && len(b) > 0 {
			t.Fatalf("round trip changed the bytes: %x → %x", b, back)
		}
	})
}

// FuzzEncJSONLists: encJSON writes lists and lists of lists of strings byte for byte as
// encoding/json does — nil lists as null, escapes, HTML characters, non-ASCII and invalid
// UTF-8 included.
func FuzzEncJSONLists(f *testing.F) {
	for _, s := range []string{"", "01KJMMA2G075Y9BD7G69CDSXQA", "a|b||c", `quo"te\|<tag>&`, "é|\u2028|\x7f|\xff", "tab\t|\x00"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, shape uint8) {
		items := strings.Split(s, "|")
		// shape picks how the items are grouped, and which groups are nil or empty.
		var lists [][]string
		for i := 0; i < len(items); {
			n := 1 + int(shape)%3
			switch (int(shape) + len(lists)) % 5 {
			case 0:
				lists = append(lists, nil)
			case 1:
				lists = append(lists, []string{})
			default:
				lists = append(lists, items[i:min(i+n, len(items))])
				i += n
			}
		}
		if got, want := encJSON(items, false), string(mustJSON(t, items)); got != want {
			t.Fatalf("encJSON(%q) = %s, encoding/json %s", items, got, want)
		}
		if got, want := encJSON(lists, false), string(mustJSON(t, lists)); got != want {
			t.Fatalf("encJSON(%q) = %s, encoding/json %s", lists, got, want)
		}
	})
}

// BenchmarkEncRecentSurfaced: a conversation's recent_surfaced, 20 turns of 10 ids, as
// the journal applier writes it every turn.
func BenchmarkEncRecentSurfaced(b *testing.B) {
	v := make([][]string, 20)
	for i := range v {
		for j := range 10 {
			v[i] = append(v[i], fmt.Sprintf("01KJMMA2G075Y9BD7G69CD%04d", i*10+j))
		}
	}
	b.Run("encJSON", func(b *testing.B) {
		for b.Loop() {
			encJSON(v, false)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			mustJSON(b, v)
		}
	})
}
