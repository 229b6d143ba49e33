package rerank

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// SettingsPrefix is the store state key prefix of namespace settings: the settings of
// namespace NS are one JSON object under "settings/NS". Reranking reads its "rerank" field
// ("on" or "off"; absent or "" means the server's --rerank default) and ignores the others,
// which belong to other features. Until settings are exposed over HTTP they are written
// with the store's SetState, e.g. {"rerank":"on"}.
const SettingsPrefix = "settings/"

// SettingsReader reads the store's key-value state (models.Store.GetState): "" and no
// error for a missing key.
type SettingsReader interface {
	GetState(ctx context.Context, key string) (string, error)
}

// Policy values.
const (
	PolicyOn  = "on"
	PolicyOff = "off"
)

// policy resolves whether reranking is on for a namespace, caching each namespace's
// settings for ttl so a recall costs no store read.
type policy struct {
	def      string // the server default, PolicyOn or PolicyOff
	settings SettingsReader
	ttl      time.Duration

	mu    sync.Mutex
	cache map[string]cachedPolicy
}

type cachedPolicy struct {
	value  string // "", on or off
	reason string // set when the settings could not be used
	at     time.Time
}

// resolve returns whether reranking is on for ns at now, and when it is off, why. Settings
// that cannot be read or understood turn it off: memory text leaves the server only when
// someone turned reranking on and the setting says so plainly.
func (p *policy) resolve(ctx context.Context, ns string, now time.Time) (bool, string) {
	c := p.lookup(ctx, ns, now)
	switch {
	case c.reason != "":
		return false, c.reason
	case c.value == PolicyOn:
		return true, ""
	case c.value == PolicyOff:
		return false, fmt.Sprintf("rerank off in the settings of namespace %s", ns)
	case p.def == PolicyOn:
		return true, ""
	}
	return false, "rerank off by default (turn it on with --rerank on, or {\"rerank\":\"on\"} in the namespace settings)"
}

func (p *policy) lookup(ctx context.Context, ns string, now time.Time) cachedPolicy {
	if p.settings == nil {
		return cachedPolicy{}
	}
	p.mu.Lock()
	c, ok := p.cache[ns]
	p.mu.Unlock()
	if ok && now.Sub(c.at) < p.ttl {
		return c
	}
	c = readPolicy(ctx, p.settings, ns)
	c.at = now
	p.mu.Lock()
	if p.cache == nil || len(p.cache) >= maxCachedPolicies {
		p.cache = map[string]cachedPolicy{}
	}
	p.cache[ns] = c
	p.mu.Unlock()
	return c
}

// maxCachedPolicies bounds the cache; it is dropped whole when full.
const maxCachedPolicies = 10000

func readPolicy(ctx context.Context, r SettingsReader, ns string) cachedPolicy {
	raw, err := r.GetState(ctx, SettingsPrefix+ns)
	if err != nil {
		return cachedPolicy{reason: fmt.Sprintf("rerank off: namespace settings unreadable: %v", err)}
	}
	if raw == "" {
		return cachedPolicy{}
	}
	var s struct {
		Rerank string `json:"rerank"`
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return cachedPolicy{reason: fmt.Sprintf("rerank off: settings of namespace %s are not a JSON object: %v", ns, err)}
	}
	switch s.Rerank {
	case "", PolicyOn, PolicyOff:
		return cachedPolicy{value: s.Rerank}
	}
	return cachedPolicy{reason: fmt.Sprintf("rerank off: settings of namespace %s say rerank %q, want on or off", ns, s.Rerank)}
}
