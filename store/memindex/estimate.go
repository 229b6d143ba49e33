package memindex

import "github.com/salience-ai/salience/index"

// Heap a loaded space retains, measured by TestEstimateTracksHeap (store/sqlite: the live
// heap after a forced collection, before and after loading namespaces of 100 to 50,000
// memories of `bench namespaces`' corpus: 256-dimension local vectors, ten edges and three
// to four concepts a memory). Component by component it is linear in what the space holds,
// so the estimate is too; it came within 4 % of the measured heap at every size. There is
// little fixed cost: a namespace of 100 memories retains about 530 KB, 5.3 KB a memory.
const (
	spaceFixedBytes   = 2048 // the space and its empty indexes' maps
	memoryBytes       = 200  // per memory or chunk beyond its packed row: its map entry, BM25 document (ordinal, length, postings)
	termBytes         = 145  // per distinct BM25 term: dictionary entry and posting list
	edgeBytes         = 64   // per graph edge (compact slab)
	nodeBytes         = 175  // per graph node: id string, ordinal map entry, adjacency
	conceptBytes      = 210  // per concept in the concept table
	vectorExtraBytes  = 88   // per vector beyond its float32 row (or codes): id and row map entry
	vectorCodeExtra   = 12   // per vector beyond its codes, once coded: two scales and a weight
	vectorCodeMinRows = index.ApproxMinRows
)

// estimateBytes estimates a loaded space's heap (the constants above).
func estimateBytes(sp *Space) int64 {
	sp.mu.RLock()
	defer sp.mu.RUnlock()
	b := int64(spaceFixedBytes)
	for _, p := range sp.mems {
		b += int64(len(p)) + memoryBytes
	}
	b += int64(sp.text.Terms()) * termBytes
	if sp.vecs != nil {
		d, n := int64(sp.vecs.Dims()), int64(sp.vecs.Len())
		b += n * vectorExtraBytes
		if n >= vectorCodeMinRows { // coded from ApproxMinRows rows on: 4-bit and int8 codes
			b += n * int64(index.CodedRowBytes(int(d))+vectorCodeExtra)
		} else {
			b += n * 4 * d
		}
	}
	b += int64(sp.graph.Len())*edgeBytes + int64(sp.graph.Nodes())*nodeBytes
	return b + int64(len(sp.concepts))*conceptBytes
}
