package models

import (
	"strings"
	"unicode"
)

// Blank reports whether s shows nothing: every character is white space, a control, a
// format character (zero-width space and joiners U+200B–U+200D, word joiner U+2060, BOM
// U+FEFF, bidi controls, soft hyphen…), a variation selector or another default-ignorable
// filler (U+3164 Hangul filler). Such content would be stored, embedded and recalled as an
// empty memory; strings.TrimSpace alone let the zero-width ones through.
func Blank(s string) bool {
	return strings.IndexFunc(s, visible) < 0
}

func visible(r rune) bool {
	return !unicode.IsSpace(r) && !unicode.In(r, unicode.Cc, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}
