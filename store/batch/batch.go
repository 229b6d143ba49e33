// Package batch checks a CreateMemories batch once for every store: SQLite and Neo4j refuse
// the same batches naming the same fields, and each receives its own copy of what it writes,
// embeddings of unit length and concept names normalized. It reads no database.
package batch

import (
	"fmt"

	"github.com/salience-ai/salience/index"
	"github.com/salience-ai/salience/models"
)

// Write is one MemoryWrite checked for storage.
type Write struct {
	Namespace string
	Units     []*models.Memory  // the memory, then its chunks: deep copies, embeddings normalized
	Concepts  []*models.Concept // models.ValidateStoredConcept's copies
	Edges     []*models.Edge    // models.ValidateStoredEdge's copies
}

// Prepare checks writes in order and returns them ready to store, with the embedder identity
// of each namespace's vectors in the batch (Dims 0: none; Name "": not given). The first
// fault is an EINVALID naming its field; nothing is checked against what is stored (ids that
// exist, the namespace's own embedder), which is the store's part.
func Prepare(writes []*models.MemoryWrite) ([]Write, map[string]models.EmbedderIdentity, error) {
	out := make([]Write, len(writes))
	ids := map[string]models.EmbedderIdentity{}
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
		p := Write{Namespace: ns, Units: make([]*models.Memory, 0, 1+len(w.Chunks))}
		if _, ok := ids[ns]; !ok {
			ids[ns] = models.EmbedderIdentity{}
		}
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
			c := um.Clone()
			if len(c.Embedding) > 0 {
				v, err := index.Normalize(c.Embedding)
				if err != nil {
					return nil, nil, models.Invalid(uf+".embedding", "embedding has a NaN or infinite component")
				}
				c.Embedding = v // c's own copy, or a new normalized one
				id := ids[ns]
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
				ids[ns] = id
			}
			p.Units = append(p.Units, c)
		}
		for j, c := range w.Concepts {
			cc, err := models.ValidateStoredConcept(c, ns, fmt.Sprintf("%s.concepts[%d]", f, j))
			if err != nil {
				return nil, nil, err
			}
			p.Concepts = append(p.Concepts, cc)
		}
		for j, e := range w.Edges {
			ec, err := models.ValidateStoredEdge(e, ns, fmt.Sprintf("%s.edges[%d]", f, j))
			if err != nil {
				return nil, nil, err
			}
			p.Edges = append(p.Edges, ec)
		}
		out[i] = p
	}
	return out, ids, nil
}
