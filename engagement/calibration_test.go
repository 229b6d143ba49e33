package engagement

import (
	"testing"

	"github.com/salience-ai/salience/models"
)

// TestCalibrationLeavesOutPredictions: a proactive prediction's p_use is its topic's predicted
// probability and it has no score components, so it counts in neither the correlation nor
// the p_use calibration.
func TestCalibrationLeavesOutPredictions(t *testing.T) {
	mk := func(mode models.Mode, pUse, conf float64, out models.EventType) *models.Surfacing {
		sf := &models.Surfacing{Mode: mode, PUse: pUse, Outcome: out, ConvType: "casual"}
		sf.Components.Confidence = conf
		return sf
	}
	ss := []*models.Surfacing{
		mk(models.ModeAmbient, 0.8, 0.9, models.EventUsed),
		mk(models.ModeAmbient, 0.2, 0.1, models.EventIgnored),
		mk(models.ModePredict, 0.9, 0, models.EventIgnored),
		mk(models.ModePredict, 0.9, 0, models.EventIgnored),
	}
	got := calibration(ss)
	if got.N != 2 || got.PUse.N != 2 || got.ByConvType["casual"].N != 2 {
		t.Fatalf("counted %d / %d / %d surfacings, want the 2 ranked ones", got.N, got.PUse.N, got.ByConvType["casual"].N)
	}
	// Brier over the two ranked ones: ((0.8−1)² + (0.2−0)²)/2 = 0.04.
	if b := got.PUse.Brier; b < 0.04-1e-12 || b > 0.04+1e-12 {
		t.Fatalf("Brier %v, want 0.04", b)
	}
	if got.Correlation != 1 {
		t.Fatalf("correlation %v, want 1", got.Correlation)
	}
}
