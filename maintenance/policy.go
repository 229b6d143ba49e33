package maintenance

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/salience-ai/salience/decay"
)

// StateGetter reads the store's key-value state (models.Store.GetState).
type StateGetter interface {
	GetState(ctx context.Context, key string) (string, error)
}

// PolicyStatePrefix starts the state key that overrides a namespace's decay policy:
// "policy/<ns>" holding "linear" or "fsrs".
const PolicyStatePrefix = "policy/"

// policyCacheTTL is how long a namespace's override is trusted before it is read again: a
// change takes effect within a minute without a read per engagement event.
const policyCacheTTL = time.Minute

// Policies resolves the decay policy of each namespace: the configured default, unless the
// store state "policy/<ns>" names another ("linear" or "fsrs"), which then runs with the
// same configured parameters. For is safe for concurrent use and fits the Policy option of
// this package and of engagement.ServiceOptions.
type Policies struct {
	def    decay.Policy
	params decay.Params
	state  StateGetter
	log    *slog.Logger

	mu    sync.Mutex
	cache map[string]cachedPolicy
}

type cachedPolicy struct {
	p    decay.Policy
	read time.Time
}

// NewPolicies returns the resolver for the default policy name ("" = decay.DefaultPolicy)
// and params; state may be nil (no per-namespace overrides). A bad name or parameter is
// EINVALID.
func NewPolicies(name string, params decay.Params, state StateGetter, log *slog.Logger) (*Policies, error) {
	def, err := decay.PolicyByName(name, params)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Policies{def: def, params: params, state: state, log: log, cache: map[string]cachedPolicy{}}, nil
}

// Default returns the configured default policy.
func (p *Policies) Default() decay.Policy { return p.def }

// For returns ns's policy. An override that cannot be read or names no policy falls back to
// the default (and is logged): a decay policy is never worth failing a request over.
func (p *Policies) For(ns string) decay.Policy {
	if p.state == nil {
		return p.def
	}
	now := time.Now() // cache expiry only; no rule depends on it
	p.mu.Lock()
	c, ok := p.cache[ns]
	p.mu.Unlock()
	if ok && now.Sub(c.read) < policyCacheTTL {
		return c.p
	}
	pol := p.def
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	name, err := p.state.GetState(ctx, PolicyStatePrefix+ns)
	cancel()
	switch {
	case err != nil:
		p.log.Warn("decay policy override unreadable; using the default", "namespace", ns, "error", err)
	case name != "" && name != p.def.Name():
		if o, err := decay.PolicyByName(name, p.params); err != nil {
			p.log.Warn("decay policy override names no policy; using the default", "namespace", ns, "value", name)
		} else {
			pol = o
		}
	}
	p.mu.Lock()
	p.cache[ns] = cachedPolicy{p: pol, read: now}
	p.mu.Unlock()
	return pol
}
