package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/models"
)

// SettingsSource returns a namespace's settings (settings.Service, which caches them, so a
// call per engagement event costs no store read).
type SettingsSource interface {
	For(ctx context.Context, ns string) (*models.Settings, error)
}

// Policies resolves the decay policy of each namespace: the configured default, unless the
// namespace's settings name another (decay.policy "linear" or "fsrs") or override its
// parameters (decay.threshold, decay.target_retention, decay.dismiss_cooldown_hours), each
// parameter they leave out being the configured one. For is safe for concurrent use and fits
// the Policy option of this package and of engagement.ServiceOptions.
type Policies struct {
	def      decay.Policy
	params   decay.Params
	settings SettingsSource
	log      *slog.Logger
}

// NewPolicies returns the resolver for the default policy name ("" = decay.DefaultPolicy)
// and params; settings may be nil (no per-namespace overrides). A bad name or parameter is
// EINVALID.
func NewPolicies(name string, params decay.Params, settings SettingsSource, log *slog.Logger) (*Policies, error) {
	def, err := decay.PolicyByName(name, params)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Policies{def: def, params: params, settings: settings, log: log}, nil
}

// For returns ns's policy. Settings that cannot be read fall back to the default (and are
// logged): a decay policy is never worth failing a request over.
func (p *Policies) For(ns string) decay.Policy {
	if p.settings == nil {
		return p.def
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	s, err := p.settings.For(ctx, ns)
	cancel()
	if err != nil {
		p.log.Warn("namespace settings unreadable; using the default decay policy", "namespace", ns, "error", err)
		return p.def
	}
	d := s.Decay
	if d == nil {
		return p.def
	}
	name := d.Policy
	if name == "" {
		name = p.def.Name()
	}
	params, own := p.paramsOf(d)
	if name == p.def.Name() && !own {
		return p.def
	}
	o, err := decay.PolicyByName(name, params)
	if err != nil { // settings are validated on write; a hand-edited record may still be wrong
		p.log.Warn("namespace settings name no valid decay policy; using the default", "namespace", ns, "value", d.Policy, "error", err)
		return p.def
	}
	return o
}

// paramsOf returns the configured parameters overridden by the namespace's, and whether the
// namespace set any.
func (p *Policies) paramsOf(d *models.DecaySettings) (decay.Params, bool) {
	out, own := p.params, false
	if d.Threshold > 0 {
		out.Threshold, own = d.Threshold, true
	}
	if d.TargetRetention > 0 {
		out.TargetRetention, own = d.TargetRetention, true
	}
	if c, ok := d.DismissCooldown(); ok {
		out.Cooldown, own = c, true
		if c <= 0 {
			out.Cooldown = -1 // decay.Params: zero is "the default", negative is "none"
		}
	}
	return out, own
}
