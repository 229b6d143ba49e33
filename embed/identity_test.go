package embed

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/salience-ai/salience/models"
)

func TestResolve(t *testing.T) {
	lex := Identity(NewLocal(0))                                             // local-hash-v1-256
	static := models.EmbedderIdentity{Name: "static-test-256-v1", Dims: 256} // a new default of the lexical size
	oai := models.EmbedderIdentity{Name: "openai:text-embedding-3-small:1536", Dims: 1536}
	old := func(d int) models.EmbedderIdentity { return models.EmbedderIdentity{Dims: d} } // written before names
	type stored = map[string]models.EmbedderIdentity
	for _, tc := range []struct {
		name        string
		stored      stored
		want        models.EmbedderIdentity
		explicit    bool
		wantLexical bool
		wantRecord  stored
		wantBad     []string // a refusal naming these namespaces
	}{
		{name: "empty store: the default serves", stored: stored{}, want: static},
		{name: "recorded as the configured one", stored: stored{"a": static}, want: static, explicit: true},
		{name: "old lexical data, explicit local: recorded as local", stored: stored{"a": old(256), "b": lex}, want: lex, explicit: true,
			wantRecord: stored{"a": lex}},
		{name: "old OpenAI data, its flags: recorded as that model", stored: stored{"a": old(1536)}, want: oai, explicit: true,
			wantRecord: stored{"a": oai}},
		{name: "old data of another size than the configured lexical", stored: stored{"a": old(64)}, want: lex, explicit: true,
			wantBad: []string{"a"}},
		{name: "old data, default static: the lexical embedder serves it", stored: stored{"a": old(256), "b": lex}, want: static,
			wantLexical: true, wantRecord: stored{"a": lex}},
		{name: "recorded lexical data, default static: lexical serves", stored: stored{"a": lex}, want: static, wantLexical: true},
		{name: "old data, explicit static: refused (the static table did not exist then)", stored: stored{"a": old(256)}, want: static, explicit: true,
			wantBad: []string{"a"}},
		{name: "recorded lexical, explicit static: refused", stored: stored{"a": lex, "b": static}, want: static, explicit: true,
			wantBad: []string{"a"}},
		{name: "lexical and static namespaces, default static: refused, nothing serves both", stored: stored{"a": lex, "b": static}, want: static,
			wantBad: []string{"a"}},
		{name: "OpenAI data, default static: refused (only lexical data follows the default)", stored: stored{"a": oai, "z": old(1536)}, want: static,
			wantBad: []string{"a", "z"}},
		{name: "same size, other name: refused", stored: stored{"a": {Name: "static-other-256", Dims: 256}}, want: static,
			wantBad: []string{"a"}},
		{name: "recorded lexical of another size, default lexical: refused", stored: stored{"a": Identity(NewLocal(64))}, want: lex,
			wantBad: []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.stored, tc.want, tc.explicit, lex)
			if tc.wantBad != nil {
				var me *MismatchError
				if !errors.As(err, &me) || strings.Join(me.Namespaces, ",") != strings.Join(tc.wantBad, ",") || me.Want != tc.want {
					t.Fatalf("Resolve = %+v, %v; want a refusal of %v", got, err, tc.wantBad)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if got.Lexical != tc.wantLexical || !maps.Equal(got.Record, tc.wantRecord) {
				t.Errorf("Resolve = %+v; want Lexical %v, Record %v", got, tc.wantLexical, tc.wantRecord)
			}
		})
	}
}

// TestMismatchErrorNamesBoth: the refusal names the namespace, what it holds and the
// configured embedder, and counts the others.
func TestMismatchErrorNamesBoth(t *testing.T) {
	lex := Identity(NewLocal(0))
	static := models.EmbedderIdentity{Name: "static-test-256-v1", Dims: 256}
	_, err := Resolve(map[string]models.EmbedderIdentity{"bees": lex, "cats": {Dims: 256}, "ok": static}, static, true, lex)
	for _, want := range []string{
		`namespace "bees" holds vectors of local-hash-v1-256 (256 dimensions) but the configured embedder is static-test-256-v1 (256 dimensions)`,
		"(and 1 more namespaces: cats)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	_, err = Resolve(map[string]models.EmbedderIdentity{"cats": {Dims: 64}}, static, true, lex)
	if want := `namespace "cats" holds 64-dimension vectors written before embedders were recorded (by the lexical embedder local-hash-v1-64, or an OpenAI-compatible model of that size)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v lacks %q", err, want)
	}
}
