package models

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzBlank: what TrimSpace empties is blank, and a string with a letter or digit is not.
func FuzzBlank(f *testing.F) {
	for _, s := range []string{"", " \t", "\u200b\ufeff", "x", "\u200bx", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.TrimSpace(s) == "" && !Blank(s) {
			t.Fatalf("Blank(%q) = false for white space", s)
		}
		if strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 && Blank(s) {
			t.Fatalf("Blank(%q) = true with a letter or digit", s)
		}
	})
}
