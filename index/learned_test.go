package index

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/salience-ai/salience/models"
)

// The learned field keeps copies of the id and words it is given: a caller's strings may
// share the bytes of a larger row (an unpacked cached memory's do), which the field would
// otherwise keep alive for as long as it holds the word.
func TestLearnedKeepsCopies(t *testing.T) {
	row := "m1 heron pond"
	id, term := row[:2], row[3:8]
	x := NewLearned()
	x.Set(id, []models.LearnedTerm{{Term: term, Weight: 1}, {Term: "gone", Weight: 0}})
	if len(x.byTerm) != 1 || len(x.byDoc) != 1 {
		t.Fatalf("byTerm %v byDoc %v, want heron for m1 only", x.byTerm, x.byDoc)
	}
	shares := func(s string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		lo := uintptr(unsafe.Pointer(unsafe.StringData(row)))
		return p >= lo && p < lo+uintptr(len(row))
	}
	for k, docs := range x.byTerm {
		for d := range docs {
			if k != "heron" || d != "m1" || shares(k) || shares(d) {
				t.Errorf("byTerm[%q][%q]: want copies of heron and m1", k, d)
			}
		}
	}
	for d, ts := range x.byDoc {
		if shares(d) || shares(ts[0]) || !strings.EqualFold(ts[0], "heron") {
			t.Errorf("byDoc[%q] = %v: want copies", d, ts)
		}
	}
}
