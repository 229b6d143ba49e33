package embed

import (
	"context"
	_ "embed" // the token table and vocabulary are built into the binary
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// The static table: one int8 row per vocabulary token with a float32 scale, distilled from
// all-MiniLM-L6-v2 (Apache-2.0; see static/LICENSE-all-MiniLM-L6-v2) by
// scripts/embedder/distill.py. TableSHA256 is what that script printed; a test holds the
// embedded file to it, so a changed table cannot ship under the old Name.
var (
	//go:embed static/table.bin
	staticTable []byte
	//go:embed static/vocab.txt
	staticVocab string
)

// StaticName identifies the table (model, dimensions, quantisation, version of the
// distillation): a namespace whose vectors came from another table must be re-embedded.
const StaticName = "static-minilm-l6-v2-256-int8-v1"

// StaticDims is the width of the built-in table.
const StaticDims = 256

// TableSHA256 is the SHA-256 of static/table.bin.
const TableSHA256 = "788284af19193162163cf5d06919cbff8dd0ee8367277f918e8509765b3c4508"

// tableMagic starts static/table.bin: "SLSTAT01", then rows and dims as uint32 LE, then one
// float32 LE scale per row, then rows×dims int8 values (row-major).
const tableMagic = "SLSTAT01"

// Static is the default embedder: semantic, with no model server. A text's vector is the
// mean of its WordPiece tokens' rows in a table distilled from a sentence model (the
// Model2Vec method: each token through the model alone, PCA, Zipf weights by token rank;
// then the rows fitted so that a message's mean points where the model's sentence
// embedding of it does, Model2Vec's "tokenlearn"; int8 rows), L2-normalized. [CLS], [SEP] and [UNK] add nothing, as in the distillation's
// own check; a text with no known token gets the zero vector. It costs microseconds a text
// and depends on its own text only.
//
// Static is safe for concurrent use.
type Static struct {
	tok    *WordPiece
	rows   int
	dims   int
	scales []float32
	q      []byte // int8 values, rows×dims
}

var (
	staticOnce sync.Once
	staticDef  *Static
	staticErr  error
)

// NewStatic returns the built-in static embedder (parsed once, then shared).
func NewStatic() (*Static, error) {
	staticOnce.Do(func() { staticDef, staticErr = parseStatic(staticTable, staticVocab) })
	return staticDef, staticErr
}

// parseStatic reads a table in the tableMagic format with its vocabulary.
func parseStatic(table []byte, vocab string) (*Static, error) {
	if len(table) < 16 || string(table[:8]) != tableMagic {
		return nil, errors.New("embed: static: not a static table")
	}
	rows := int(binary.LittleEndian.Uint32(table[8:]))
	dims := int(binary.LittleEndian.Uint32(table[12:]))
	if rows <= 0 || dims <= 0 || len(table) != 16+4*rows+rows*dims {
		return nil, fmt.Errorf("embed: static: table of %d bytes does not hold %d rows of %d dims", len(table), rows, dims)
	}
	s := &Static{tok: NewWordPiece(vocab), rows: rows, dims: dims, scales: make([]float32, rows), q: table[16+4*rows:]}
	for i := range s.scales {
		s.scales[i] = math.Float32frombits(binary.LittleEndian.Uint32(table[16+4*i:]))
	}
	if len(s.tok.vocab) > rows {
		return nil, fmt.Errorf("embed: static: vocabulary of %d tokens, table of %d rows", len(s.tok.vocab), rows)
	}
	return s, nil
}

// Dims returns the table's width.
func (s *Static) Dims() int { return s.dims }

// Name identifies the table, e.g. "static-minilm-l6-v2-256-int8-v1".
func (s *Static) Name() string { return StaticName }

// Embed returns one vector per text; it never fails.
func (s *Static) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = s.embedOne(t)
	}
	return out, nil
}

func (s *Static) embedOne(text string) []float32 {
	acc := make([]float32, s.dims)
	unk := s.tok.Unk()
	n := 0
	for _, id := range s.tok.Tokenize(text) {
		if id == unk || id < 0 || int(id) >= s.rows {
			continue
		}
		sc := s.scales[id]
		row := s.q[int(id)*s.dims : (int(id)+1)*s.dims]
		for j, b := range row {
			acc[j] += sc * float32(int8(b))
		}
		n++
	}
	if n == 0 {
		return acc
	}
	var norm float64
	for _, x := range acc {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return acc
	}
	inv := 1 / math.Sqrt(norm)
	for j, x := range acc {
		acc[j] = float32(float64(x) * inv)
	}
	return acc
}
