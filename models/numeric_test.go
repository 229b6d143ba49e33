package models

import (
	"math"
	"testing"
	"unicode/utf8"
)

func TestClamp01(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{-0.5, 0}, {0, 0}, {0.3, 0.3}, {1, 1}, {1.7, 1}, {math.NaN(), 0}, {math.Inf(1), 1}, {math.Inf(-1), 0},
	} {
		if got := Clamp01(tc.in); got != tc.want {
			t.Errorf("Clamp01(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel…"},
		{"héllo", 2, "h…"}, // 'é' is bytes 1-2: cutting at 2 would split it
		{"日本語", 4, "日…"},   // each rune is 3 bytes
		{"日本語", 0, "…"},
		{"ab\xffcd", 4, "abc…"}, // the invalid byte in the kept part is dropped
	} {
		got := Clip(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q is not valid UTF-8", tc.in, tc.n, got)
		}
	}
}

func TestNormalizeL2(t *testing.T) {
	v := []float32{3, 4}
	if !NormalizeL2(v) || v[0] != 0.6 || v[1] != 0.8 {
		t.Fatalf("NormalizeL2([3 4]) = %v, want [0.6 0.8]", v)
	}
	z := []float64{0, 0}
	if !NormalizeL2(z) || z[0] != 0 || z[1] != 0 {
		t.Fatalf("zero vector changed: %v", z)
	}
	bad := []float32{1, float32(math.NaN())}
	if NormalizeL2(bad) || bad[0] != 1 {
		t.Fatalf("NaN vector: ok or changed: %v", bad)
	}
}

func FuzzClip(f *testing.F) {
	f.Add("héllo wörld", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		got := Clip(s, n)
		if len(s) > n && !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q: invalid UTF-8", s, n, got)
		}
		if len(s) > n && len(got) > n+len("…") {
			t.Fatalf("Clip(%q, %d) = %q: too long", s, n, got)
		}
	})
}
