package models

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestErrorCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code string
	}{
		{nil, ""},
		{errors.New("boom"), EINTERNAL},
		{Invalid("kind", "bad"), EINVALID},
		{fmt.Errorf("wrapped: %w", Errorf(ENOTFOUND, "gone")), ENOTFOUND},
	} {
		if got := ErrorCode(tc.err); got != tc.code {
			t.Errorf("ErrorCode(%v) = %q, want %q", tc.err, got, tc.code)
		}
	}
	if got := ErrorMessage(errors.New("secret detail")); got != "internal error" {
		t.Errorf("an unexpected error leaks its text: %q", got)
	}
	err := WithFieldPrefix(Invalid("content", "empty"), "memories[2].")
	if ErrorField(err) != "memories[2].content" {
		t.Errorf("prefixed field = %q", ErrorField(err))
	}
	if f := ErrorField(WithFieldPrefix(Errorf(EINVALID, "null"), "memories[1].")); f != "memories[1]" {
		t.Errorf("prefix without a field = %q", f)
	}
}

func TestMemoryValidate(t *testing.T) {
	ok := func() *Memory { return &Memory{Kind: KindFact, Content: "Nadia keeps bees."} }
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		edit  func(m *Memory)
		code  string
		field string
	}{
		{"valid", func(*Memory) {}, "", ""},
		{"no kind", func(m *Memory) { m.Kind = "" }, EINVALID, "kind"},
		{"unknown kind", func(m *Memory) { m.Kind = "poem" }, EINVALID, "kind"},
		{"blank content", func(m *Memory) { m.Content = " \n\t" }, EINVALID, "content"},
		// Issue 39: content of invisible characters only is empty too.
		{"zero-width content", func(m *Memory) { m.Content = "\u200b\u200c\u200d\u2060\ufeff" }, EINVALID, "content"},
		{"bidi controls only", func(m *Memory) { m.Content = " \u202e\u2066\u200f\u061c " }, EINVALID, "content"},
		{"fillers only", func(m *Memory) { m.Content = "\u3164\ufe0f\u00ad\x00" }, EINVALID, "content"},
		{"a letter among zero-widths", func(m *Memory) { m.Content = "\u200bx\u200b" }, "", ""},
		{"emoji with a joiner", func(m *Memory) { m.Content = "\U0001F469\u200d\U0001F4BB" }, "", ""},
		{"too large", func(m *Memory) { m.Content = strings.Repeat("x", MaxContentBytes+1) }, ETOOLARGE, "content"},
		{"bad utf-8", func(m *Memory) { m.Content = "bees \xff" }, EINVALID, "content"},
		{"importance", func(m *Memory) { m.Importance = 1.5 }, EINVALID, "importance"},
		{"invalid before valid", func(m *Memory) { m.ValidAt, m.InvalidAt = at, at.Add(-time.Hour) }, EINVALID, "invalid_at"},
		{"empty trigger", func(m *Memory) { m.Triggers = []string{"honey", " "} }, EINVALID, "triggers[1]"},
		{"half triple", func(m *Memory) { m.Triple = &Triple{Subject: "Nadia", Predicate: "keeps"} }, EINVALID, "triple"},
		{"long speaker", func(m *Memory) { m.Source.Speaker = strings.Repeat("s", MaxIDBytes+1) }, EINVALID, "source.speaker"},
		{"unknown role", func(m *Memory) { m.Source.Role = "narrator" }, EINVALID, "source.role"},
		{"assistant role", func(m *Memory) { m.Source.Role = RoleAssistant }, "", ""},
		{"user role", func(m *Memory) { m.Source.Role = RoleUser }, "", ""},
	} {
		m := ok()
		tc.edit(m)
		err := m.Validate(0)
		if ErrorCode(err) != tc.code || ErrorField(err) != tc.field {
			t.Errorf("%s: err = %v, want %q on %q", tc.name, err, tc.code, tc.field)
		}
	}
}

func TestNamespacesAndConcepts(t *testing.T) {
	for ns, valid := range map[string]bool{"bot-1": true, "a.b_c": true, "": false, "-x": false, "a b": false, strings.Repeat("a", 65): false} {
		if got := ValidateNamespace(ns) == nil; got != valid {
			t.Errorf("ValidateNamespace(%q) valid = %v, want %v", ns, got, valid)
		}
	}
	for in, want := range map[string]string{"  New   York ": "new york", "Rock'n'Roll!": "rock'n'roll", "C++ / Go": "c go", "\x00": ""} {
		if got := NormalizeConcept(in); got != want {
			t.Errorf("NormalizeConcept(%q) = %q, want %q", in, got, want)
		}
	}
	if id := ConceptID("Bees"); id != "c:bees" || !IsConceptID(id) || IsConceptID("01ABC") {
		t.Errorf("concept ids: %q", id)
	}
	e := &Edge{From: "a", To: "b"}
	if e.Other("a") != "b" || e.Other("b") != "a" {
		t.Error("Edge.Other")
	}
}

func TestNamespaceOwnsKey(t *testing.T) {
	for _, tc := range []struct {
		ns, key string
		want    bool
	}{
		{"demo", "learn/model/demo", true},
		{"demo", "bandit/demo", true},
		{"demo", "settings/demo", true},
		{"demo", "settings-audit/demo", true},
		{"demo", "policy/demo", true},
		{"demo", "experiment-snapshot/demo/01J/2026-05-01", true},
		{"demo", "learn/model/demo2", false},       // a longer namespace's
		{"demo", "settings/demo.v2", false},        // likewise
		{"demo.v2", "settings/demo", false},        // a shorter one's
		{"demo", "decay-scan/demo", false},         // no namespace kind
		{"demo", "learn/model/", false},            // no namespace at all
		{"demo", "experiment-snapshot/demo", true}, // the kind and the namespace alone
	} {
		if got := NamespaceOwnsKey(tc.ns, tc.key); got != tc.want {
			t.Errorf("NamespaceOwnsKey(%q, %q) = %v, want %v", tc.ns, tc.key, got, tc.want)
		}
	}
}

// TestNamespaceKeys: the range a store deletes holds the keys NamespaceOwnsKey gives the
// namespace and no other's, so DeleteNamespace takes its state and only its.
func TestNamespaceKeys(t *testing.T) {
	key, lo, hi := NamespaceKeys(SettingsKeyPrefix, "demo")
	if key != "settings/demo" || lo != "settings/demo/" || hi != "settings/demo0" {
		t.Fatalf("NamespaceKeys = %q, %q, %q", key, lo, hi)
	}
	inRange := func(k string) bool { return k == key || (k >= lo && k < hi) }
	for _, k := range []string{"settings/demo", "settings/demo/", "settings/demo/v2", "settings/demo2",
		"settings/demo.v2", "settings/demo-x", "settings/dem", "settings/demo0", "settings/demo//x"} {
		if got, want := inRange(k), NamespaceOwnsKey("demo", k); got != want {
			t.Errorf("%q: in the range %v, NamespaceOwnsKey %v", k, got, want)
		}
	}
}

// TestResurfaceable: only a whole, non-sensitive memory that is still true and out of its
// cooldown may come back unasked; each condition alone keeps it out.
func TestResurfaceable(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		edit func(m *Memory)
		want bool
	}{
		{"plain", func(*Memory) {}, true},
		{"retired later", func(m *Memory) { m.InvalidAt = now.Add(time.Second) }, true},
		{"cooldown over", func(m *Memory) { m.Schedule.CooldownTo = now }, true},
		{"chunk", func(m *Memory) { m.ParentID = "m_parent" }, false},
		{"sensitive", func(m *Memory) { m.Sensitive = true }, false},
		{"retired now", func(m *Memory) { m.InvalidAt = now }, false},
		{"retired before", func(m *Memory) { m.InvalidAt = now.Add(-time.Hour) }, false},
		{"cooling", func(m *Memory) { m.Schedule.CooldownTo = now.Add(time.Nanosecond) }, false},
	} {
		m := &Memory{ID: "m_1", Namespace: "a", Kind: KindFact, Content: "x", CreatedAt: now.Add(-time.Hour)}
		tt.edit(m)
		if got := m.Resurfaceable(now); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestConceptNames: normalized, each once, in the order asked, empty names dropped.
func TestConceptNames(t *testing.T) {
	got := ConceptNames([]string{"Berlin", "  paris ", "?!", "berlin", "New  York", "Paris"})
	want := []string{"berlin", "paris", "new york"}
	if !slices.Equal(got, want) {
		t.Fatalf("ConceptNames = %q, want %q", got, want)
	}
	if got := ConceptNames(nil); len(got) != 0 {
		t.Fatalf("ConceptNames(nil) = %q, want none", got)
	}
}

// TestMemoriesInOrder: GetMemories' answer order; an id asked twice comes back twice, the
// second a copy that shares nothing with the first.
func TestMemoriesInOrder(t *testing.T) {
	a := &Memory{ID: "a", Domains: []string{"x"}}
	b := &Memory{ID: "b"}
	got := MemoriesInOrder([]string{"b", "gone", "a", "b"}, map[string]*Memory{"a": a, "b": b})
	if len(got) != 3 || got[0] != b || got[1] != a || got[2].ID != "b" {
		t.Fatalf("MemoriesInOrder = %v, want b, a, b", got)
	}
	if got[2] == b {
		t.Fatal("the second b is the first one, not a copy")
	}
	twice := MemoriesInOrder([]string{"a", "a"}, map[string]*Memory{"a": a})
	twice[1].Domains[0] = "changed"
	if a.Domains[0] != "x" {
		t.Fatal("the copy shares its domains with the found memory")
	}
	if got := MemoriesInOrder([]string{"gone"}, map[string]*Memory{}); len(got) != 0 {
		t.Fatalf("nothing found: %v", got)
	}
}

// TestEdgeOrders: key order is From, To, Type, byte-wise; the strongest order puts heavier
// edges first and breaks ties by key.
func TestEdgeOrders(t *testing.T) {
	e := func(from, to string, typ EdgeType, w float64) *Edge {
		return &Edge{From: from, To: to, Type: typ, Weight: w}
	}
	es := []*Edge{
		e("b", "a", EdgeMentions, 0.5), e("a", "c", EdgeMentions, 0.2), e("a", "b", EdgeTemporal, 0.9),
		e("a", "b", EdgeMentions, 0.5), e("B", "z", EdgeMentions, 0.5),
	}
	key := func(e *Edge) string { return e.From + ">" + e.To + ":" + string(e.Type) }
	keys := func(es []*Edge) []string {
		var out []string
		for _, e := range es {
			out = append(out, key(e))
		}
		return out
	}
	byKey := slices.Clone(es)
	slices.SortFunc(byKey, func(a, b *Edge) int { return a.Key().Compare(b.Key()) })
	if got, want := keys(byKey), []string{"B>z:mentions", "a>b:mentions", "a>b:temporal", "a>c:mentions", "b>a:mentions"}; !slices.Equal(got, want) {
		t.Fatalf("key order %q, want %q", got, want)
	}
	strongest := slices.Clone(es)
	slices.SortFunc(strongest, CompareStrongest)
	if got, want := keys(strongest), []string{"a>b:temporal", "B>z:mentions", "a>b:mentions", "b>a:mentions", "a>c:mentions"}; !slices.Equal(got, want) {
		t.Fatalf("strongest order %q, want %q", got, want)
	}
}
