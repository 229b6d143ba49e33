package models

import (
	"math"
	"unicode/utf8"
)

// Clamp01 limits x to [0, 1]. Confidences, edge weights and score components all live there;
// NaN becomes 0 so a bad input can never poison a stored value.
func Clamp01(x float64) float64 {
	switch {
	case x > 1:
		return 1
	case x >= 0:
		return x
	default: // negative or NaN
		return 0
	}
}

// Clip shortens s to at most n bytes followed by "…", never cutting a UTF-8 sequence in
// half: the cut moves back to the start of the rune it would split. Invalid UTF-8 in the
// kept part is dropped, so the result is always valid UTF-8 (error messages and logs quote it).
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	out := s[:n]
	if !utf8.ValidString(out) {
		out = toValidUTF8(out)
	}
	return out + "…"
}

func toValidUTF8(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size > 1 {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// NormalizeL2 scales v to unit Euclidean length in place. A zero vector stays zero. It
// returns false, leaving v unchanged, when a component is NaN or infinite. The one L2
// normalisation of the code base: embedders and the vector index both call it.
func NormalizeL2[T float32 | float64](v []T) bool {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if math.IsNaN(ss) || math.IsInf(ss, 0) {
		return false
	}
	if ss == 0 {
		return true
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		v[i] = T(float64(x) * inv)
	}
	return true
}
