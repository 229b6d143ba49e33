package rerank

import (
	"context"
	"fmt"

	"github.com/salience-ai/salience/models"
)

// SettingsSource returns a namespace's settings (settings.Service, which caches them); the
// reranker reads their Rerank field ("on" or "off"; "" means the server's --rerank
// default) and ignores the others, which belong to other features.
type SettingsSource interface {
	For(ctx context.Context, ns string) (*models.Settings, error)
}

// Policy values.
const (
	PolicyOn  = "on"
	PolicyOff = "off"
)

// policy resolves whether reranking is on for a namespace.
type policy struct {
	def      string // the server default, PolicyOn or PolicyOff
	settings SettingsSource
}

// resolve returns whether reranking is on for ns, and when it is off, why. Settings that
// cannot be read or understood turn it off: memory text leaves the server only when
// someone turned reranking on and the setting says so plainly.
func (p *policy) resolve(ctx context.Context, ns string) (bool, string) {
	value := ""
	if p.settings != nil {
		s, err := p.settings.For(ctx, ns)
		if err != nil {
			return false, fmt.Sprintf("rerank off: settings of namespace %s unusable: %s", ns, models.ErrorMessage(err))
		}
		value = s.Rerank
	}
	switch {
	case value == PolicyOn:
		return true, ""
	case value == PolicyOff:
		return false, fmt.Sprintf("rerank off in the settings of namespace %s", ns)
	case p.def == PolicyOn:
		return true, ""
	}
	return false, "rerank off by default (turn it on with --rerank on, or {\"rerank\":\"on\"} in the namespace settings)"
}
