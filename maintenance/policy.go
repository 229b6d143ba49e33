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
// namespace's settings name another (decay.policy "linear" or "fsrs"), which then runs with
// the same configured parameters. For is safe for concurrent use and fits the Policy option
// of this package and of engagement.ServiceOptions.
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

// Default returns the configured default policy.
func (p *Policies) Default() decay.Policy { return p.def }

// For returns ns's policy. Settings that cannot be read fall back to the default (and are
// logged): a decay policy is never worth failing a request over.
func (p *Policies) For(ns string) decay.Policy {
	if p.settings == nil {
		return p.def
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	s, err := p.settings.For(ctx, ns)
	cancel()
	switch {
	case err != nil:
		p.log.Warn("namespace settings unreadable; using the default decay policy", "namespace", ns, "error", err)
		return p.def
	case s.Decay == nil || s.Decay.Policy == "" || s.Decay.Policy == p.def.Name():
		return p.def
	}
	o, err := decay.PolicyByName(s.Decay.Policy, p.params)
	if err != nil { // settings are validated on write; a hand-edited record may still be wrong
		p.log.Warn("namespace settings name no decay policy; using the default", "namespace", ns, "value", s.Decay.Policy)
		return p.def
	}
	return o
}
