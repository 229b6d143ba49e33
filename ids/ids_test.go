package ids

import "testing"

func TestMemoryOf(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"01M80EQBFMHAM1P1GF4G3Q57V1", "01M80EQBFMHAM1P1GF4G3Q57V1"},
		{"01M80EQBFMHAM1P1GF4G3Q57V1-0", "01M80EQBFMHAM1P1GF4G3Q57V1"},
		{"01M80EQBFMHAM1P1GF4G3Q57V1-12", "01M80EQBFMHAM1P1GF4G3Q57V1"},
		{"-3", "-3"},
		{"c:bees", "c:bees"},
	} {
		if got := MemoryOf(tc.in); got != tc.want {
			t.Errorf("MemoryOf(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
