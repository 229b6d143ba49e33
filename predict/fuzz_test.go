package predict

import (
	"strings"
	"testing"

	"github.com/salience-ai/salience/models"
)

// FuzzParsePolicy: ParsePolicy and models.ValidThresholdPolicy accept the same policies; an
// accepted fixed threshold is in [0, 1], spelled as a decimal, and its normalized name parses
// back to the same policy.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"", "bandit", "off", "fixed:default", "fixed:0.3", "fixed:1", "fixed:1e-400", "fixed:0x1p-2", "fixed:0.0000001", " fixed:0.50 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s, "threshold_policy")
		if (err == nil) != models.ValidThresholdPolicy(s) {
			t.Fatalf("%q: ParsePolicy says %v, ValidThresholdPolicy says %v", s, err, models.ValidThresholdPolicy(s))
		}
		if err != nil {
			if models.ErrorField(err) != "threshold_policy" {
				t.Fatalf("%q: %v does not name threshold_policy", s, err)
			}
			return
		}
		if x, ok := strings.CutPrefix(p.Name, policyFixed); ok && x != "default" {
			if p.Fixed < 0 || p.Fixed > 1 || strings.ContainsAny(x, "eExXpP+-_") {
				t.Fatalf("%q: fixed %v named %q", s, p.Fixed, p.Name)
			}
		}
		again, err := ParsePolicy(p.Name, "threshold_policy")
		if err != nil || again != p {
			t.Fatalf("%q: name %q parses to %+v, %v; want %+v", s, p.Name, again, err, p)
		}
	})
}
