package learn

import "math"

// Bins is the number of equal-width probability bins of the expected calibration error.
const Bins = 10

// Calibration accumulates predicted probabilities against outcomes: the Brier score, the
// expected calibration error over Bins equal-width bins, and the reliability curve.
type Calibration struct {
	N      int
	sqErr  float64
	pos    float64
	binN   [Bins]int
	binP   [Bins]float64 // Σ p per bin
	binPos [Bins]float64 // Σ y per bin
}

// Add records one prediction p of an outcome y (1 or 0). A p that is not finite counts as 0.
func (c *Calibration) Add(p, y float64) {
	if p != p || p < 0 {
		p = 0
	}
	p = math.Min(p, 1)
	c.N++
	c.sqErr += (p - y) * (p - y)
	c.pos += y
	b := min(int(p*Bins), Bins-1)
	c.binN[b]++
	c.binP[b] += p
	c.binPos[b] += y
}

// Brier is the mean squared error of the predictions; 0 without any.
func (c *Calibration) Brier() float64 {
	if c.N == 0 {
		return 0
	}
	return c.sqErr / float64(c.N)
}

// Rate is the share of positive outcomes: the best constant predictor.
func (c *Calibration) Rate() float64 {
	if c.N == 0 {
		return 0
	}
	return c.pos / float64(c.N)
}

// ConstantBrier is the Brier score of the best constant predictor, the positive rate r:
// r(1−r). Its ECE is 0.
func (c *Calibration) ConstantBrier() float64 {
	r := c.Rate()
	return r * (1 - r)
}

// ECE is the expected calibration error: Σ over bins of n_b/N·|mean p − mean y|.
func (c *Calibration) ECE() float64 {
	if c.N == 0 {
		return 0
	}
	e := 0.0
	for b := range Bins {
		if c.binN[b] > 0 {
			e += math.Abs(c.binP[b]-c.binPos[b]) / float64(c.N)
		}
	}
	return e
}

// Point is one bin of the reliability curve: how many predictions fell in it, their mean
// probability and the share that came true.
type Point struct {
	Count     int     `json:"count"`
	Predicted float64 `json:"predicted"`
	Observed  float64 `json:"observed"`
}

// Curve returns the reliability curve's non-empty bins, lowest first.
func (c *Calibration) Curve() []Point {
	var out []Point
	for b := range Bins {
		if n := c.binN[b]; n > 0 {
			out = append(out, Point{Count: n, Predicted: c.binP[b] / float64(n), Observed: c.binPos[b] / float64(n)})
		}
	}
	return out
}
