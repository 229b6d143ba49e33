package neo4j

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
)

// Times: the stores' one codec (models.EncodeTime), as the embedded store keeps them. (0
// meant the zero time until migrateNoTime, so the Unix epoch read back unset.) Cypher spells
// noTime noTimeCypher.
const (
	noTime       = models.NoTime
	noTimeCypher = `(-9223372036854775807 - 1)`
)

var (
	encTime    = models.EncodeTime
	decTime    = models.DecodeTime
	filterTime = models.FilterTime
)

// optTime is a filter bound as a parameter: nil (no bound) for the zero time.
func optTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return filterTime(t)
}

// optString is a filter value as a parameter: nil (no filter) for "".
func optString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// encStrings stores a list of strings; an empty list is no property at all (nil).
func encStrings(v []string) any {
	if len(v) == 0 {
		return nil
	}
	return slices.Clone(v)
}

// encJSON stores a nested value (lists of lists, structs) as JSON text; "" for empty.
func encJSON(v any, empty bool) string {
	if empty {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Only lists of strings, times and plain structs are encoded: cannot fail.
		panic(fmt.Sprintf("neo4j: encode %T: %v", v, err))
	}
	return string(b)
}

func decJSON(s string, v any, field string) error {
	if s == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("decode %s: %w", field, err)
	}
	return nil
}

// encVector stores an embedding as a list of floats (Neo4j's vector property type);
// float32 → float64 → float32 is exact.
func encVector(v []float32) any {
	if len(v) == 0 {
		return nil
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// props reads a node's or relationship's property map as returned by a map projection.
// Missing properties read as zero values; a property of the wrong type is an error.
type props struct {
	m   map[string]any
	err error
}

func asProps(v any) props {
	m, ok := v.(map[string]any)
	if !ok {
		return props{err: fmt.Errorf("neo4j: expected a map, got %T", v)}
	}
	return props{m: m}
}

func (p *props) fail(key string, v any) {
	if p.err == nil {
		p.err = fmt.Errorf("neo4j: property %s has type %T", key, v)
	}
}

func (p *props) str(key string) string {
	switch v := p.m[key].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		p.fail(key, v)
		return ""
	}
}

func (p *props) i64(key string) int64 {
	switch v := p.m[key].(type) {
	case nil:
		return 0
	case int64:
		return v
	default:
		p.fail(key, v)
		return 0
	}
}

func (p *props) int(key string) int { return int(p.i64(key)) }

func (p *props) f64(key string) float64 {
	switch v := p.m[key].(type) {
	case nil:
		return 0
	case float64:
		return v
	case int64:
		return float64(v)
	default:
		p.fail(key, v)
		return 0
	}
}

func (p *props) bool(key string) bool {
	switch v := p.m[key].(type) {
	case nil:
		return false
	case bool:
		return v
	default:
		p.fail(key, v)
		return false
	}
}

// time reads a time property; a missing one is the zero time (not the epoch).
func (p *props) time(key string) time.Time {
	if p.m[key] == nil {
		return time.Time{}
	}
	return decTime(p.i64(key))
}

func (p *props) strs(key string) []string {
	switch v := p.m[key].(type) {
	case nil:
		return nil
	case []any:
		if len(v) == 0 {
			return nil
		}
		out := make([]string, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				p.fail(key, x)
				return nil
			}
			out[i] = s
		}
		return out
	default:
		p.fail(key, v)
		return nil
	}
}

func (p *props) vector(key string) []float32 {
	switch v := p.m[key].(type) {
	case nil:
		return nil
	case []any:
		if len(v) == 0 {
			return nil
		}
		out := make([]float32, len(v))
		for i, x := range v {
			f, ok := x.(float64)
			if !ok {
				p.fail(key, x)
				return nil
			}
			out[i] = float32(f)
		}
		return out
	default:
		p.fail(key, v)
		return nil
	}
}

func (p *props) json(key string, v any) {
	if err := decJSON(p.str(key), v, key); err != nil && p.err == nil {
		p.err = err
	}
}

// value returns a record's value by key; a missing key is an error.
func value(r *neo4j.Record, key string) (any, error) {
	v, ok := r.Get(key)
	if !ok {
		return nil, fmt.Errorf("neo4j: record has no %s", key)
	}
	return v, nil
}

// relType is the Neo4j relationship type of an edge type: upper case, Neo4j's convention
// (mentions → MENTIONS). It goes into queries as a parameter ($($rt)), never into the text;
// the exact type is kept in the relationship's type property and matched on too, so two
// types that upper-case alike stay two edges.
func relType(t models.EdgeType) string { return strings.ToUpper(string(t)) }

// edgeProps is what a relationship stores and an update replaces. Its key, which never
// changes, is set once, where the relationship is created (insertEdges, txPutEdge): r.key =
// [from, to, type], a list, which Cypher orders as EdgeKey.Compare does, so the strongest
// edges of a node are sorted by one property read where reading both ends' ids cost two node
// lookups for every edge of a concept mentioned thousands of times (graph.go).
func edgeProps(e *models.Edge) map[string]any {
	return map[string]any{
		"type": string(e.Type), "weight": e.Weight, "co": int64(e.CoOccurrences),
		"last_co": encTime(e.LastCoOccurred), "last_decayed": encTime(e.LastDecayed),
		"predicate": e.Predicate, "fact": e.Fact,
	}
}

// decEdge reads an edge from its namespace, end ids and relationship properties.
func decEdge(ns, from, to string, v any) (*models.Edge, error) {
	p := asProps(v)
	e := &models.Edge{
		Namespace: ns, From: from, To: to, Type: models.EdgeType(p.str("type")),
		Weight: p.f64("weight"), CoOccurrences: p.int("co"),
		LastCoOccurred: p.time("last_co"), LastDecayed: p.time("last_decayed"),
		Predicate: p.str("predicate"), Fact: p.str("fact"),
	}
	return e, p.err
}

// edgeRows reads records of (from, to, r) into edges of ns.
func edgeRows(ns string, recs []*neo4j.Record) ([]*models.Edge, error) {
	out := make([]*models.Edge, 0, len(recs))
	for _, r := range recs {
		from, _ := r.Get("from")
		to, _ := r.Get("to")
		rv, _ := r.Get("r")
		fs, ok1 := from.(string)
		ts, ok2 := to.(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("neo4j: edge ends are %T, %T", from, to)
		}
		e, err := decEdge(ns, fs, ts, rv)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
