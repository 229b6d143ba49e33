package sqlite

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/salience-ai/salience/models"
)

// A surfacing's components are stored compactly: a version byte (componentsBinary), a
// uvarint mask of the fields that are not zero, each of those as its eight bytes
// (little-endian IEEE 754), then Features as a uvarint when its mask bit is set. As JSON
// they were about 660 of a surfacing row's 1,000 bytes (20 fields, floats written out in
// full); this is about 170. Rows written as JSON before still read (a '{' first).
// TestComponentsCoverEveryField fills every field of a Components by reflection, so a
// field added to it but not here fails.

// componentsBinary marks the binary form.
const componentsBinary = 0x01

// components lists a Components' float fields in their wire order; new ones go at the end,
// so a value written before them still decodes (its mask has no bit for them). The mask bit
// after them, featuresBit, marks Components.Features. The journal of earlier versions
// (upgrade.go) used the same form.
func components(c *models.Components) [20]*float64 {
	return [20]*float64{&c.Relevance, &c.BM25, &c.Vector, &c.Phrase, &c.Activation, &c.Confidence,
		&c.Freshness, &c.Proximity, &c.Importance, &c.Novelty, &c.Volunteer, &c.Score, &c.Used,
		&c.Speaker, &c.Turn, &c.Top, &c.Margin, &c.Coverage, &c.Match, &c.Question}
}

// featuresBit is the mask bit of Components.Features.
const featuresBit = 20

// encComponents is c's column value: "" for the zero Components, else the binary form.
func encComponents(c models.Components) any {
	if c == (models.Components{}) {
		return ""
	}
	fs := components(&c)
	var mask uint64
	for k, f := range fs {
		if *f != 0 {
			mask |= 1 << k
		}
	}
	if c.Features != 0 {
		mask |= 1 << featuresBit
	}
	b := binary.AppendUvarint(make([]byte, 1, 1+4+8*len(fs)+3), mask)
	b[0] = componentsBinary
	for k, f := range fs {
		if mask&(1<<k) != 0 {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*f))
		}
	}
	if c.Features != 0 {
		b = binary.AppendUvarint(b, uint64(c.Features))
	}
	return b
}

// decComponents reads a components column: "", the binary form or JSON.
func decComponents(b []byte, c *models.Components) error {
	*c = models.Components{}
	switch {
	case len(b) == 0:
		return nil
	case b[0] == '{':
		return decJSON(string(b), c, "components")
	case b[0] != componentsBinary:
		return fmt.Errorf("decode column components: unknown form %#x", b[0])
	}
	r := &journalReader{b: b[1:]}
	r.components(c)
	if r.err == nil && len(r.b) != 0 {
		r.fail()
	}
	if r.err != nil {
		return fmt.Errorf("decode column components: %w", r.err)
	}
	return nil
}

// components reads a mask and the fields it marks into c.
func (r *journalReader) components(c *models.Components) {
	fields := components(c)
	mask := r.uvarint()
	if mask>>(featuresBit+1) != 0 {
		r.fail()
	}
	for k, f := range fields {
		if mask&(1<<k) != 0 {
			if *f = r.f64(); *f == 0 && !math.Signbit(*f) {
				r.fail() // a zero is left out of the mask: one encoding per value
			}
		}
	}
	if mask&(1<<featuresBit) != 0 {
		v := r.uvarint()
		if v == 0 || v > math.MaxInt32 {
			r.fail() // a zero is left out of the mask
		}
		c.Features = int(v)
	}
}

type componentsDest struct{ p *models.Components }

func (d componentsDest) scanBytes(b []byte) error { return decComponents(b, d.p) }

func componentsCol[R any](name string, f func(*R) *models.Components) column[R] {
	return column[R]{name: name, value: func(r *R) any { return encComponents(*f(r)) },
		dest: func(r *R) any { return componentsDest{f(r)} }}
}
