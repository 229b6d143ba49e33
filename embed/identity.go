package embed

import (
	"fmt"
	"sort"
	"strings"

	"github.com/salience-ai/salience/models"
)

// A namespace keeps the embedder that made its vectors: vectors of two models cannot be
// compared even when their sizes agree (the lexical table and a distilled one are both 256
// dimensions), so a server starts only when every namespace's recorded embedder is the one
// it will embed queries with. This file holds that rule; the stores only record names.

// Identity is the identity of e, as a store records it.
func Identity(e Embedder) models.EmbedderIdentity {
	return models.EmbedderIdentity{Name: e.Name(), Dims: e.Dims()}
}

// IsLexical reports whether name is the lexical embedder's (Local.Name: "local-hash-v1-256").
func IsLexical(name string) bool { return strings.HasPrefix(name, "local-hash-") }

// couldBeUnrecorded reports whether vectors of the embedder called name may have been written
// before stores recorded embedder names: only the lexical embedder and OpenAI-compatible
// models (OpenAI.Name: "openai:model:dims") existed then.
func couldBeUnrecorded(name string) bool {
	return IsLexical(name) || strings.HasPrefix(name, "openai:")
}

// Resolution is what Resolve decided for a store.
type Resolution struct {
	// Lexical is true when the store is served by the lexical embedder instead of the
	// configured default, because every namespace with vectors holds lexical ones.
	Lexical bool
	// Record holds the namespaces written before names were recorded, with the identity
	// to record for each (the embedder that serves them from now on).
	Record map[string]models.EmbedderIdentity
}

// Resolve decides which embedder serves a store whose namespaces with vectors hold stored
// (a Name of "" is a namespace written before names were recorded). want is the configured
// embedder, explicit whether the operator chose it (flag or environment) rather than taking
// the default, and lexical the lexical embedder the same flags would build.
//
// The rule:
//  1. A namespace matches an embedder when its recorded identity is that embedder's, or,
//     unrecorded, when the embedder is one that existed before names were recorded (lexical
//     or OpenAI-compatible) and makes vectors of the namespace's size: the configuration
//     that served it before the upgrade serves it unchanged.
//  2. When every namespace matches want, want serves, and the unrecorded ones are recorded
//     as want.
//  3. Otherwise, when want is the default (not explicit) and every namespace matches the
//     lexical embedder, the lexical embedder serves (Lexical), and the unrecorded ones are
//     recorded as lexical: a data directory written before the default changed keeps the
//     embedder it was written with.
//  4. Otherwise the start is refused with a *MismatchError naming the namespaces that do
//     not match want, their embedders and want.
func Resolve(stored map[string]models.EmbedderIdentity, want models.EmbedderIdentity, explicit bool, lexical models.EmbedderIdentity) (Resolution, error) {
	bad := mismatched(stored, want)
	if len(bad) == 0 {
		return Resolution{Record: unrecorded(stored, want)}, nil
	}
	if !explicit && len(mismatched(stored, lexical)) == 0 {
		return Resolution{Lexical: true, Record: unrecorded(stored, lexical)}, nil
	}
	return Resolution{}, &MismatchError{Want: want, Namespaces: bad, Stored: stored}
}

// matches is rule 1.
func matches(have, e models.EmbedderIdentity) bool {
	if have.Name == "" {
		return couldBeUnrecorded(e.Name) && have.Dims == e.Dims
	}
	return have == e
}

// mismatched returns the namespaces that do not match e, sorted.
func mismatched(stored map[string]models.EmbedderIdentity, e models.EmbedderIdentity) []string {
	var bad []string
	for ns, have := range stored {
		if !matches(have, e) {
			bad = append(bad, ns)
		}
	}
	sort.Strings(bad)
	return bad
}

// unrecorded maps the namespaces with no recorded name to e (nil when there are none).
func unrecorded(stored map[string]models.EmbedderIdentity, e models.EmbedderIdentity) map[string]models.EmbedderIdentity {
	var out map[string]models.EmbedderIdentity
	for ns, have := range stored {
		if have.Name == "" {
			if out == nil {
				out = map[string]models.EmbedderIdentity{}
			}
			out[ns] = e
		}
	}
	return out
}

// MismatchError is Resolve's refusal: Namespaces (sorted, at least one) hold vectors of
// another embedder than Want.
type MismatchError struct {
	Want       models.EmbedderIdentity
	Namespaces []string
	Stored     map[string]models.EmbedderIdentity
}

func (e *MismatchError) Error() string {
	ns := e.Namespaces[0]
	more := ""
	if len(e.Namespaces) > 1 {
		more = fmt.Sprintf(" (and %d more namespaces: %s)", len(e.Namespaces)-1, strings.Join(e.Namespaces[1:], ", "))
	}
	return fmt.Sprintf("embedder mismatch: namespace %q holds %s but the configured embedder is %s%s",
		ns, Describe(e.Stored[ns]), describeWant(e.Want), more)
}

// Describe says in words which embedder made a namespace's vectors.
func Describe(id models.EmbedderIdentity) string {
	if id.Name == "" {
		return fmt.Sprintf("%d-dimension vectors written before embedders were recorded (by the lexical embedder %s, or an OpenAI-compatible model of that size)", id.Dims, NewLocal(id.Dims).Name())
	}
	return fmt.Sprintf("vectors of %s (%d dimensions)", id.Name, id.Dims)
}

func describeWant(id models.EmbedderIdentity) string {
	return fmt.Sprintf("%s (%d dimensions)", id.Name, id.Dims)
}
