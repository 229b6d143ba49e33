package nlp

import (
	"reflect"
	"testing"
)

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"Where are the bees kept?", []string{"bee", "kept"}},
		{"Nadia keeps her bees on the roof of the old cannery.", []string{"nadia", "keep", "bee", "roof", "old", "canneri"}},
		{"Caroline's adoption", []string{"carolin", "adopt"}},
		{"don't STOP running", []string{"stop", "run"}},
		{"", nil},
		{"\xff\xfe bad", []string{"bad"}},
	} {
		got := Terms(tc.in)
		if len(got) == 0 && len(tc.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
