package memindex

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/salience-ai/salience/models"
)

// fill sets every field v reaches to a value that is not its zero, different field by field
// (n counts them): a field pack forgets does not come back.
func fill(t *testing.T, v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d-é", *n))
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(*n) * 1_000_003)
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.1)
	case reflect.Float32:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(t, v.Index(i), n)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 3, 1, 0, 0, *n, *n, time.UTC)))
			return
		}
		for i := range v.NumField() {
			fill(t, v.Field(i), n)
		}
	default:
		t.Fatalf("fill: no value for a %s (%s): teach fill and pack", v.Kind(), v.Type())
	}
}

func TestPackRoundTrips(t *testing.T) {
	var full models.Memory
	n := 0
	fill(t, reflect.ValueOf(&full).Elem(), &n)
	empty := models.Memory{Domains: []string{}, IrrelevantContexts: [][]string{{}, nil}, Learned: []models.LearnedTerm{}, Embedding: []float32{}}
	for name, m := range map[string]*models.Memory{"every field set": &full, "zero": {}, "empty lists": &empty} {
		got := pack(m).memory()
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%s: unpacked\n%+v\nwant\n%+v", name, got, m)
		}
	}
	// Times come back as the stores return them: the same instant, in UTC.
	at := time.Date(2026, 3, 1, 9, 30, 0, 7, time.FixedZone("CET", 3600))
	got := pack(&models.Memory{CreatedAt: at}).memory().CreatedAt
	if !got.Equal(at) || got.Location() != time.UTC {
		t.Errorf("CreatedAt %v, want %v in UTC", got, at)
	}
}

// An unpacked memory is its caller's own: changing it changes neither the packed bytes nor
// the next unpacking.
func TestUnpackedIsTheCallers(t *testing.T) {
	p := pack(&models.Memory{ID: "m1", Content: "heron", Concepts: []string{"bird"}, Confidence: 0.5})
	m := p.memory()
	m.Concepts[0], m.Content, m.Confidence = "fish", "pond", 0.9
	again := p.memory()
	if again.Concepts[0] != "bird" || again.Content != "heron" || again.Confidence != 0.5 {
		t.Errorf("unpacked again: %+v", again)
	}
}

// Memories unpacked together share blocks, yet each is its own: appending to one's list
// leaves the next one's as it was.
func TestUnpackedTogetherStayApart(t *testing.T) {
	u := newUnpacker(2)
	a := u.memory(pack(&models.Memory{ID: "a", Concepts: []string{"bird"}}))
	b := u.memory(pack(&models.Memory{ID: "b", Concepts: []string{"pond"}, Domains: []string{"home"}}))
	a.Concepts = append(a.Concepts, "fish")
	a.ID = "changed"
	if !reflect.DeepEqual(b.Concepts, []string{"pond"}) || !reflect.DeepEqual(b.Domains, []string{"home"}) || b.ID != "b" {
		t.Errorf("b after changing a: %+v", b)
	}
}

// FuzzPackRoundTrip: whatever a memory holds comes back from its packed form.
func FuzzPackRoundTrip(f *testing.F) {
	f.Add("m1", "a heron by the pond", "bird,pond", int64(1_780_000_000_000_000_000), 0.5, 3, true)
	f.Add("", "", "", int64(math.MinInt64), -0.0, -7, false)
	f.Fuzz(func(t *testing.T, id, content, list string, at int64, x float64, n int, flag bool) {
		if math.IsNaN(x) {
			x = 0 // NaN is never equal to itself; its bits round-trip like any other
		}
		var concepts []string
		if list != "" {
			concepts = strings.Split(list, ",")
		}
		when := models.DecodeTime(at)
		m := &models.Memory{ID: id, Content: content, Concepts: concepts, Domains: concepts[:0:0], CreatedAt: when,
			Importance: x, Confidence: -x, ChunkIndex: n, UsageCount: -n, Sensitive: flag, ParentID: content,
			Learned: []models.LearnedTerm{{Term: id, Weight: x, At: when}}, IrrelevantContexts: [][]string{concepts},
			Schedule: models.Schedule{Due: when, Reps: n}, Embedding: []float32{float32(x)}}
		if flag {
			m.Triple = &models.Triple{Subject: id, Predicate: list, Object: content}
		}
		if got := pack(m).memory(); !reflect.DeepEqual(got, m) {
			t.Fatalf("unpacked\n%+v\nwant\n%+v", got, m)
		}
	})
}

// What a reader keeps of a memory must not keep its packed row alive: a row is replaced on
// every update (a turn that surfaces it, an event on it), and a conversation keeps its
// recent results' ids for twenty turns. So View hands out the ids it was asked with (the
// soak's resident set grew 11 % in 20 s while they shared the rows). The learned field
// copies what it keeps (index.TestLearnedKeepsCopies).
func TestViewHandsOutTheIDsAsked(t *testing.T) {
	set := NewSet(0, quiet())
	sp := loaded(set, mem("ns", "m1", "a heron by the pond"))
	asked := strings.Clone("m1")
	for _, got := range [][]*models.Memory{sp.View([]string{asked}, false), sp.Memories([]string{asked})} {
		if len(got) != 1 || unsafe.StringData(got[0].ID) != unsafe.StringData(asked) {
			t.Fatalf("the id read is not the string asked with: %v", got)
		}
	}
}
