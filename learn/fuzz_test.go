package learn

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/salience-ai/salience/models"
)

// FuzzUpdate feeds the model adversarial streams — any feature values, NaN and ±Inf
// included, rank in turn too, any labels, either kind of turn — and checks every weight
// stays finite and within MaxWeight of its prior, the match and rank weights non-negative,
// both curves non-decreasing, and p_use within 0..1.
func FuzzUpdate(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(make([]byte, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := DefaultConfig()
		m := New(cfg)
		w0 := cfg.prior()
		for len(data) >= 8*6+1 {
			v := func() float64 {
				x := math.Float64frombits(binary.LittleEndian.Uint64(data))
				data = data[8:]
				return x
			}
			c := models.Components{Match: v(), Coverage: v(), Used: v(), Phrase: v(), BM25: v(), Margin: v(), Speaker: 1,
				Question: float64(data[0] >> 1 & 1)}
			y := float64(data[0] & 1)
			data = data[1:]
			x := Features(&c)
			m.Update(cfg, &x, y)
			for i, w := range m.W {
				if math.IsNaN(w) || math.IsInf(w, 0) || math.Abs(w-w0[i]) > cfg.MaxWeight {
					t.Fatalf("w[%s] = %v after %d events", FeatureNames[i], w, m.N)
				}
				if nonNegative[i] && w < 0 {
					t.Fatalf("w[%s] = %v < 0 after %d events", FeatureNames[i], w, m.N)
				}
			}
			for _, curve := range []int{FSaid, FAsked} {
				for k := 1; k < knots; k++ {
					if m.W[curve+k] < m.W[curve+k-1] {
						t.Fatalf("%s decreases after %d events: %v", FeatureNames[curve], m.N, m.W[curve:curve+knots])
					}
				}
			}
			if p := m.P(&x); !(p >= 0 && p <= 1) {
				t.Fatalf("p = %v", p)
			}
		}
	})
}
