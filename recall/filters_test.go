package recall

import (
	"strings"
	"testing"

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
		p := normalizedPrefix(s, dedupeProbe)
		if !strings.HasPrefix(whole, p) || (len(whole) <= dedupeProbe && p != whole) {
			t.Errorf("normalizedPrefix(%q) = %q, not a prefix of (or not all of) %q", s, p, whole)
		}
	}
}
