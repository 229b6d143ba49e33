package recall

import (
	"context"
	"time"

	"github.com/salience-ai/salience/models"
)

// SettingsSource returns a namespace's settings (settings.Service, which caches them).
type SettingsSource interface {
	For(ctx context.Context, ns string) (*models.Settings, error)
}

// WithSettings returns o with a namespace's settings laid over it. Precedence is
// defaults < namespace settings < an experiment's variant: a variant's overrides, when
// experiments come, are applied after these the same way. Only what the settings set
// changes; o's maps are copied, never written.
func (o Options) WithSettings(s *models.Settings) Options {
	if s == nil {
		return o
	}
	if len(s.Weights) > 0 {
		w := make(map[models.Mode]Weights, len(o.Weights)+len(s.Weights))
		for m, v := range o.Weights {
			w[m] = v
		}
		for m, v := range s.Weights {
			w[m] = Weights(v) // a mode's weights are replaced whole: they are one character
		}
		o.Weights = w
	}
	if h := s.FreshnessHalfLifeHours; h > 0 {
		o.HalfLife = time.Duration(h * float64(time.Hour))
	}
	if s.Diversity != nil {
		o.MMRLambda = 1 - *s.Diversity
	}
	if s.ThresholdPolicy != "" {
		o.ThresholdPolicy = s.ThresholdPolicy
	}
	if st := s.Startup; st != nil {
		if st.Crystals > 0 {
			o.Startup.Crystals = st.Crystals
		}
		if st.Anchors > 0 {
			o.Startup.Anchors = st.Anchors
		}
		if st.Summaries > 0 {
			o.Startup.Summaries = st.Summaries
		}
		if st.Facts > 0 {
			o.Startup.Facts = st.Facts
		}
	}
	return o
}

// forNamespace returns the pipeline with ns's settings applied, their version, and, when
// they could not be read, why (the request then runs on the server's defaults and says so
// in degraded: a broken settings record must not take a bot's memory away).
func (p *Pipeline) forNamespace(ctx context.Context, ns string) (*Pipeline, int, string) {
	if p.opts.Settings == nil {
		return p, 0, ""
	}
	s, err := p.opts.Settings.For(ctx, ns)
	if err != nil {
		return p, 0, "settings: " + models.ErrorMessage(err)
	}
	if s == nil {
		return p, 0, ""
	}
	q := *p
	q.opts = p.opts.WithSettings(s)
	return &q, s.Version, ""
}
