package learn

import "math"

// Sample is one logged event as the model trains on it: the features of its surfacing, its
// label and its sequence number.
type Sample struct {
	X   Vector
	Y   float64
	Seq int64
}

// Replay trains m on samples in the order given (the log's sequence order), as the online
// updates did one by one.
func Replay(cfg Config, m *Model, samples []Sample) {
	for i := range samples {
		m.Update(cfg, &samples[i].X, samples[i].Y)
		m.Seq = samples[i].Seq
	}
}

// MaxDiff is the largest absolute difference between two models' weights.
func MaxDiff(a, b *Model) float64 {
	d := 0.0
	for i := range a.W {
		d = math.Max(d, math.Abs(a.W[i]-b.W[i]))
	}
	return d
}
