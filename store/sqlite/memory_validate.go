package sqlite

import (
	"errors"
	"fmt"
	"slices"

	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
	"github.com/salience-ai/salience/store/memindex"
)

// Validation of the writes of memories, chunks, concepts and edges. It runs before the
// write lock is taken and computes what the indexes need (normalized embeddings, terms).

// preparedWrite is one validated MemoryWrite, with everything the indexes need computed
// before the write lock is taken.
type preparedWrite struct {
	ns       string
	units    []memindex.Unit
	concepts []*models.Concept
	edges    []*models.Edge
}

// prepareWrites validates the batch and returns, per namespace, the embedder identity of its
// vectors in the batch (Dims 0: none; Name "": not given).
func prepareWrites(writes []*models.MemoryWrite) ([]preparedWrite, map[string]models.EmbedderIdentity, error) {
	out := make([]preparedWrite, len(writes))
	dims := map[string]models.EmbedderIdentity{}
	for i, w := range writes {
		f := fmt.Sprintf("writes[%d]", i)
		if w == nil || w.Memory == nil {
			return nil, nil, models.Invalid(f+".memory", "memory is missing")
		}
		m := w.Memory
		if err := models.ValidateStoredMemory(m, f+".memory"); err != nil {
			return nil, nil, err
		}
		if m.ParentID != "" {
			return nil, nil, models.Invalid(f+".memory.parent_id", "a chunk cannot be written without its parent")
		}
		if m.ChunkCount != len(w.Chunks) {
			return nil, nil, models.Invalid(f+".memory.chunk_count", "chunk_count is %d but %d chunks were given", m.ChunkCount, len(w.Chunks))
		}
		ns := m.Namespace
		p := preparedWrite{ns: ns}
		for j, um := range append([]*models.Memory{m}, w.Chunks...) {
			uf := f + ".memory"
			if j > 0 {
				uf = fmt.Sprintf("%s.chunks[%d]", f, j-1)
				if err := models.ValidateStoredMemory(um, uf); err != nil {
					return nil, nil, err
				}
				if um.ParentID != m.ID || um.Namespace != ns || um.ChunkCount != 0 {
					return nil, nil, models.Invalid(uf+".parent_id", "a chunk must belong to its memory's namespace, name it as parent and have no chunks")
				}
			}
			c := cloneMemory(um)
			if len(c.Embedding) > 0 {
				v, err := index.Normalize(c.Embedding)
				if err != nil {
					return nil, nil, models.Invalid(uf+".embedding", "embedding has a NaN or infinite component")
				}
				c.Embedding = v // c's own copy, or a new normalized one
				id := dims[ns]
				if id.Dims != 0 && id.Dims != len(v) {
					return nil, nil, models.Invalid(uf+".embedding", "embedding has %d dimensions, others in the batch %d", len(v), id.Dims)
				}
				if w.Embedder != "" && id.Name != "" && w.Embedder != id.Name {
					return nil, nil, models.Invalid(f+".embedder", "embedder %s differs from %s of others in the batch", w.Embedder, id.Name)
				}
				id.Dims = len(v)
				if w.Embedder != "" {
					id.Name = w.Embedder
				}
				dims[ns] = id
			} else if _, ok := dims[ns]; !ok {
				dims[ns] = models.EmbedderIdentity{}
			}
			u := memindex.Unit{M: c}
			if c.Indexed() {
				u.Terms = nlp.Terms(c.Content)
			}
			p.units = append(p.units, u)
		}
		for j, c := range w.Concepts {
			cf := fmt.Sprintf("%s.concepts[%d]", f, j)
			if c == nil {
				return nil, nil, models.Invalid(cf, "concept is missing")
			}
			cc := *c
			cc.Aliases = slices.Clone(c.Aliases)
			cc.Name = models.NormalizeConcept(c.Name)
			if cc.Namespace == "" {
				cc.Namespace = ns
			}
			switch {
			case cc.Namespace != ns:
				return nil, nil, models.Invalid(cf+".namespace", "concept of another namespace")
			case cc.Name == "":
				return nil, nil, models.Invalid(cf+".name", "concept name is empty")
			case cc.Kind == "":
				return nil, nil, models.Invalid(cf+".kind", "concept kind is required")
			case cc.Mentions < 0:
				return nil, nil, models.Invalid(cf+".mentions", "mentions must not be negative")
			}
			if err := errors.Join(models.CheckStoredTime(cf+".first_seen", cc.FirstSeen), models.CheckStoredTime(cf+".last_seen", cc.LastSeen)); err != nil {
				return nil, nil, err
			}
			p.concepts = append(p.concepts, &cc)
		}
		for j, e := range w.Edges {
			ef := fmt.Sprintf("%s.edges[%d]", f, j)
			ec, err := models.ValidateStoredEdge(e, ns, ef)
			if err != nil {
				return nil, nil, err
			}
			p.edges = append(p.edges, ec)
		}
		out[i] = p
	}
	return out, dims, nil
}
