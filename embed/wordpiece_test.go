package embed

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// goldenCase is one line of testdata/wordpiece_golden.json: a string and the ids the
// model's own tokenizer (the Python tokenizers package) gives it, without [CLS]/[SEP].
type goldenCase struct {
	Text string  `json:"text"`
	IDs  []int32 `json:"ids"`
}

func staticTokenizer(t testing.TB) *WordPiece {
	t.Helper()
	s, err := NewStatic()
	if err != nil {
		t.Fatal(err)
	}
	return s.tok
}

// TestWordPieceMatchesModelTokenizer: every golden string — accents, CJK, emoji,
// punctuation, numbers, control characters, over-long words — tokenizes to the same ids in Go.
func TestWordPieceMatchesModelTokenizer(t *testing.T) {
	raw, err := os.ReadFile("testdata/wordpiece_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 200 {
		t.Fatalf("golden file has %d cases, want a few hundred", len(cases))
	}
	tok := staticTokenizer(t)
	bad := 0
	for _, c := range cases {
		got := tok.Tokenize(c.Text)
		if !slices.Equal(got, c.IDs) && !(len(got) == 0 && len(c.IDs) == 0) {
			bad++
			if bad <= 10 {
				t.Errorf("Tokenize(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d strings differ from the model's tokenizer", bad, len(cases))
	}
}

func TestWordPieceRules(t *testing.T) {
	tok := staticTokenizer(t)
	id := func(s string) int32 { return tok.vocab[s] }
	for _, c := range []struct {
		text string
		want []int32
	}{
		{"Hello, WORLD!", []int32{id("hello"), id(","), id("world"), id("!")}},
		{"café", []int32{id("cafe")}},                  // accents stripped
		{"東京", []int32{id("東"), id("京")}},              // CJK ideographs split
		{"tab\there", []int32{id("tab"), id("here")}},  // whitespace
		{"a\u200bb", tok.Tokenize("ab")},               // format characters dropped
		{strings.Repeat("a", 101), []int32{tok.Unk()}}, // over 100 characters
		{"[CLS] x", []int32{id("[CLS]"), id("x")}},     // literal special tokens
		{"", nil},
	} {
		if got := tok.Tokenize(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Tokenize(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// FuzzWordPiece: any input tokenizes without panicking, to known ids, and the same way twice.
func FuzzWordPiece(f *testing.F) {
	for _, s := range []string{"Hello, world!", "Café 東京 😀", "[CLS][SEP]", "a\x00b\u200b", strings.Repeat("x", 120), "##", "[", "\xff\xfe"} {
		f.Add(s)
	}
	tok := staticTokenizer(f)
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Tokenize(s)
		for _, id := range ids {
			if id < 0 || int(id) >= len(tok.vocab) {
				t.Fatalf("Tokenize(%q) gave id %d outside the vocabulary", s, id)
			}
		}
		if again := tok.Tokenize(s); !slices.Equal(ids, again) {
			t.Fatalf("Tokenize(%q) not deterministic", s)
		}
		if utf8.ValidString(s) && strings.TrimSpace(s) != "" && len(ids) > 4*utf8.RuneCountInString(s)+1 {
			t.Fatalf("Tokenize(%q) gave %d ids for %d runes", s, len(ids), utf8.RuneCountInString(s))
		}
	})
}

// BenchmarkWordPieceWorstWords: 64 KiB of 100-letter words that split into single letters,
// the most pieces a word can be tried for.
func BenchmarkWordPieceWorstWords(b *testing.B) {
	tok := staticTokenizer(b)
	text := strings.Repeat(strings.Repeat("qx", 50)+" ", 64<<10/101)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Tokenize(text)
	}
}
