package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
)

// SettingsService reads and writes namespace settings (settings.Service).
type SettingsService interface {
	// Get returns ns's settings, uncached (version 0 when none were written).
	Get(ctx context.Context, ns string) (*models.Settings, error)
	// Update writes what change returns from the current settings: validated (EINVALID
	// naming the field), versioned, audited as by; ECONFLICT when a non-zero Version in the
	// result is not the current one.
	Update(ctx context.Context, ns, by string, change func(cur *models.Settings) (*models.Settings, error)) (*models.Settings, error)
	// History returns the audit trail, newest first, at most limit entries (0 = all).
	History(ctx context.Context, ns string, limit int) ([]models.SettingsChange, error)
	// Forget drops what is cached of ns, as the namespace was deleted.
	Forget(ns string)
}

// Who may write a namespace's settings (Config.SettingsWriters, --settings-writers).
const (
	SettingsWritersAdmin     = "admin"     // the admin keys of the namespace only (the default)
	SettingsWritersNamespace = "namespace" // also every key granted the namespace
)

// authorizeSettings admits the admin keys of :ns (Principal.AdminOf) to its settings routes,
// and keys granted :ns when the server lets namespaces write their own settings. Everyone
// else is EFORBIDDEN.
func (s *Server) authorizeSettings(c *gin.Context) {
	ns := c.Param("ns")
	if err := models.ValidateNamespace(ns); err != nil {
		fail(c, err)
		return
	}
	p := principal(c)
	switch {
	case p == nil:
	case p.AdminOf(ns):
		c.Next()
		return
	case s.settingsWriters == SettingsWritersNamespace && p.CanAccess(ns):
		c.Next()
		return
	case s.settingsWriters == SettingsWritersNamespace:
		fail(c, models.Errorf(models.EFORBIDDEN, "this API key is not granted namespace %q", ns))
		return
	}
	fail(c, models.Errorf(models.EFORBIDDEN, "the settings and experiments of namespace %q need an admin API key granted it (the server runs with --settings-writers admin)", ns))
}

// getSettings handles GET /v1/namespaces/:ns/settings.
func (s *Server) getSettings(c *gin.Context) {
	st, err := s.settings.Get(c.Request.Context(), c.Param("ns"))
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, settingsToAPI(st))
}

// putSettings handles PUT /v1/namespaces/:ns/settings: the body replaces every setting.
func (s *Server) putSettings(c *gin.Context) {
	body, err := readBody(c.Request)
	if err != nil {
		fail(c, err)
		return
	}
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		// null decodes into a struct as nothing at all, which would reset every setting: a
		// replacement must be written out, even if it is {}.
		fail(c, models.Invalid("", "the body must be a settings object, not null (send {} to reset every setting)"))
		return
	}
	var in api.Settings
	if err := decodeStrict(body, &in); err != nil {
		fail(c, err)
		return
	}
	s.writeSettings(c, func(*models.Settings) (*models.Settings, error) { return settingsFromAPI(&in), nil })
}

// patchSettings handles PATCH /v1/namespaces/:ns/settings: the body is a JSON merge patch
// (RFC 7396) of the current settings, so {"diversity": null} returns diversity to the
// default and {"weights": {"search": {…}}} leaves ambient's weights as they are.
func (s *Server) patchSettings(c *gin.Context) {
	body, err := readBody(c.Request)
	if err != nil {
		fail(c, err)
		return
	}
	var patch map[string]any
	if err := decodeStrict(body, &patch); err != nil {
		fail(c, err)
		return
	}
	if patch == nil {
		fail(c, models.Invalid("", "a merge patch must be a JSON object"))
		return
	}
	// The server writes these; a patch naming one (even null) expects a change that would
	// silently not happen. version stays: it is the patch's precondition, as on PUT.
	for _, f := range []string{"updated_at", "updated_by"} {
		if _, ok := patch[f]; ok {
			fail(c, models.Invalid(f, "%s is read-only: the server sets it on each write", f))
			return
		}
	}
	s.writeSettings(c, func(cur *models.Settings) (*models.Settings, error) {
		b, err := json.Marshal(settingsToAPI(cur))
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, err
		}
		delete(doc, "updated_at") // not settings: never fields a patch can break
		delete(doc, "updated_by")
		merged, err := json.Marshal(mergePatch(doc, patch))
		if err != nil {
			return nil, err
		}
		var in api.Settings
		if err := decodeStrict(merged, &in); err != nil {
			return nil, err
		}
		return settingsFromAPI(&in), nil
	})
}

func (s *Server) writeSettings(c *gin.Context, change func(cur *models.Settings) (*models.Settings, error)) {
	by := "anonymous"
	if p := principal(c); p != nil {
		by = p.Name
	}
	st, err := s.settings.Update(c.Request.Context(), c.Param("ns"), by, change)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, settingsToAPI(st))
}

// settingsHistory handles GET /v1/namespaces/:ns/settings/history?limit=N (default 50).
func (s *Server) settingsHistory(c *gin.Context) {
	limit, err := parseLimitQuery(c.Request.URL.Query(), 50, 1000)
	if err != nil {
		fail(c, err)
		return
	}
	hs, err := s.settings.History(c.Request.Context(), c.Param("ns"), limit)
	if err != nil {
		fail(c, err)
		return
	}
	out := api.SettingsHistory{Changes: make([]api.SettingsChange, 0, len(hs))}
	for _, h := range hs {
		ch := api.SettingsChange{Version: h.Version, At: h.At, By: h.By, Changes: make([]api.FieldChange, 0, len(h.Changes))}
		for _, f := range h.Changes {
			ch.Changes = append(ch.Changes, api.FieldChange(f))
		}
		out.Changes = append(out.Changes, ch)
	}
	c.JSON(http.StatusOK, out)
}

// mergePatch applies an RFC 7396 merge patch to target: objects merge key by key, null
// deletes, anything else replaces.
func mergePatch(target, patch map[string]any) map[string]any {
	if target == nil {
		target = map[string]any{}
	}
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(target, k)
		case map[string]any:
			sub, _ := target[k].(map[string]any)
			target[k] = mergePatch(sub, pv)
		default:
			target[k] = v
		}
	}
	return target
}

func settingsToAPI(s *models.Settings) *api.Settings {
	out := &api.Settings{
		Version: s.Version, UpdatedAt: s.UpdatedAt, UpdatedBy: s.UpdatedBy,
		FreshnessHalfLifeHours: s.FreshnessHalfLifeHours, Rerank: s.Rerank,
		ThresholdPolicy: s.ThresholdPolicy, EmptyTurnReward: copyFloat(s.EmptyTurnReward),
		ImplicitIgnoreAfterHours: s.ImplicitIgnoreAfterHours, HistoryRetentionDays: s.HistoryRetentionDays,
	}
	if len(s.Weights) > 0 {
		out.Weights = make(map[string]api.ScoreWeights, len(s.Weights))
		for m, w := range s.Weights {
			out.Weights[string(m)] = api.ScoreWeights(w)
		}
	}
	if s.Diversity != nil {
		d := *s.Diversity
		out.Diversity = &d
	}
	if s.Startup != nil {
		st := api.StartupLimits(*s.Startup)
		out.Startup = &st
	}
	if s.Decay != nil {
		out.Decay = &api.DecaySettings{Policy: s.Decay.Policy, Threshold: s.Decay.Threshold,
			TargetRetention: s.Decay.TargetRetention, DismissCooldownHours: copyFloat(s.Decay.DismissCooldownHours)}
	}
	return out
}

func settingsFromAPI(s *api.Settings) *models.Settings {
	out := &models.Settings{
		Version: s.Version, FreshnessHalfLifeHours: s.FreshnessHalfLifeHours, Rerank: s.Rerank,
		ThresholdPolicy: s.ThresholdPolicy, EmptyTurnReward: copyFloat(s.EmptyTurnReward),
		ImplicitIgnoreAfterHours: s.ImplicitIgnoreAfterHours, HistoryRetentionDays: s.HistoryRetentionDays,
	}
	if len(s.Weights) > 0 {
		out.Weights = make(map[models.Mode]models.ScoreWeights, len(s.Weights))
		for m, w := range s.Weights {
			out.Weights[models.Mode(m)] = models.ScoreWeights(w)
		}
	}
	if s.Diversity != nil {
		d := *s.Diversity
		out.Diversity = &d
	}
	if s.Startup != nil {
		st := models.StartupLimits(*s.Startup)
		out.Startup = &st
	}
	if s.Decay != nil {
		out.Decay = &models.DecaySettings{Policy: s.Decay.Policy, Threshold: s.Decay.Threshold,
			TargetRetention: s.Decay.TargetRetention, DismissCooldownHours: copyFloat(s.Decay.DismissCooldownHours)}
	}
	return out
}

// requireSettings answers EUNAVAILABLE when the server was built without a settings service.
func (s *Server) requireSettings(c *gin.Context) {
	if s.settings == nil {
		fail(c, models.Errorf(models.EUNAVAILABLE, "namespace settings are not configured on this server"))
		return
	}
	c.Next()
}

// copyFloat copies an optional number, so the wire and stored records share nothing.
func copyFloat(f *float64) *float64 {
	if f == nil {
		return nil
	}
	v := *f
	return &v
}
