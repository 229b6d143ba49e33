package recall

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/salience-ai/salience/models"
)

func TestDedupe(t *testing.T) {
	long := strings.Repeat("word ", 100) // 500 bytes: past the probe
	mk := func(id, content string) *candidate { return &candidate{mem: &models.Memory{ID: id, Content: content}} }
	list := []*candidate{
		mk("a", "Nadia keeps BEES"),
		mk("b", "  nadia\tkeeps   bees "), // same normalized text
		mk("c", "Nadia keeps bees on the roof"),
		mk("d", long+"ending one"),
		mk("e", long+"ending two"), // same probe, different text
		mk("f", strings.ToUpper(long)+"ENDING   ONE"),
		mk("g", "Straße İstanbul"),
		mk("h", "STRASSE istanbul"),
	}
	var got []string
	for _, c := range dedupe(list) {
		got = append(got, c.mem.ID)
	}
	if want := "a c d e g h"; strings.Join(got, " ") != want {
		t.Fatalf("dedupe kept %v, want %s", got, want)
	}
}

func TestNormalizedPrefixMatchesWhole(t *testing.T) {
	for _, s := range []string{"", "  ", "A  b\nC", "ÀÉÎ ôü", strings.Repeat("Ab ", 200), "x\xffy  z"} {
		whole := normalizedContent(s)
		p := string(appendNormalizedPrefix(nil, s, dedupeProbe))
		if !strings.HasPrefix(whole, p) || (len(whole) <= dedupeProbe && p != whole) {
			t.Errorf("normalizedPrefix(%q) = %q, not a prefix of (or not all of) %q", s, p, whole)
		}
	}
}

// normalizedPrefixByRune is the rune-at-a-time definition appendNormalizedPrefix must keep.
func normalizedPrefixByRune(s string, n int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if b.Len() >= n {
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteString(strings.ToLower(string(r)))
	}
	return b.String()
}

func TestAppendNormalizedPrefixByRune(t *testing.T) {
	check := func(s string, n int) {
		t.Helper()
		dst := []byte("kept|")
		got := appendNormalizedPrefix(dst, s, n)
		if want := "kept|" + normalizedPrefixByRune(s, n); string(got) != want {
			t.Fatalf("appendNormalizedPrefix(%q, %d) = %q, want %q", s, n, got, want)
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		check(string(r), 8)
		check(" A"+string(r)+"b \u00a0"+string(r), 3)
	}
	for _, s := range []string{"", "   ", "\xff\xfe x", "A\u0085B\u00a0C\u2028D", "İstanbul ΣΊΣΥΦΟΣ ǅ", strings.Repeat("Ab \t", 200), "x\xffy  z"} {
		for n := 0; n < 20; n++ {
			check(s, n)
		}
		check(s, dedupeProbe)
	}
}

func FuzzAppendNormalizedPrefix(f *testing.F) {
	for _, s := range []string{"Nadia keeps BEES", "  a\tb\u00a0c ", "İ\xffß"} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = max(0, n%300)
		if got, want := string(appendNormalizedPrefix(nil, s, n)), normalizedPrefixByRune(s, n); got != want {
			t.Fatalf("appendNormalizedPrefix(%q, %d) = %q, want %q", s, n, got, want)
		}
	})
}

// TestCutDedupesLazily: cutting an undeduped list with a deduper takes what cutting the
// deduped list takes.
func TestCutDedupesLazily(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	texts := []string{"Nadia keeps bees", "nadia  KEEPS bees", "The ferry leaves at seven", "the ferry leaves at seven ",
		strings.Repeat("long text ", 40) + "one", strings.Repeat("LONG text ", 40) + "one", strings.Repeat("long text ", 40) + "two", "Omar"}
	for i := 0; i < 500; i++ {
		list := make([]*candidate, rng.IntN(30))
		for j := range list {
			list[j] = &candidate{id: fmt.Sprint(j), textRank: 1, score: float64(len(list) - j),
				mem: &models.Memory{ID: fmt.Sprint(j), Content: texts[rng.IntN(len(texts))], CreatedAt: now}}
		}
		req := &Request{Limit: 1 + rng.IntN(10), TokenBudget: []int{0, 40, 90}[rng.IntN(3)], Now: now}
		want := cut(req, dedupe(slices.Clone(list)), nil)
		got := cut(req, list, newDeduper(req.Limit))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("lazy cut = %+v, want %+v", got, want)
		}
	}
}
