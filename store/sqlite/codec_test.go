package sqlite

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
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

// FuzzDecStrings: decStrings fails where encoding/json does and decodes the same list
// otherwise; and every list survives encStrings → decStrings.
func FuzzDecStrings(f *testing.F) {
	for _, s := range []string{``, `[]`, `["a"]`, `["a","b"]`, `["a",]`, `[""]`, `["\"",""]`, `["é","\u2028"]`, `[,]`, `["a""b"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
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
