package client

import (
	"context"

	"github.com/salience-ai/salience/api"
)

// The settings calls need an admin key granted the namespace, or any key granted it when
// the server runs with --settings-writers namespace; any other key gets CodeForbidden.

// Settings returns the namespace's settings (version 0 when none were written).
func (n *Namespace) Settings(ctx context.Context) (*api.Settings, error) {
	var out api.Settings
	if err := n.c.do(ctx, call{route: routeSettings, params: []string{n.ns}, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutSettings replaces every setting with s and returns the record as stored. A non-zero
// s.Version must be the version held, else CodeConflict. Without a version it is retried:
// writing the same settings again changes nothing. With one it is not: had a first attempt
// been applied and its answer lost, the retry would meet the version it made and answer
// CodeConflict for a write that succeeded.
func (n *Namespace) PutSettings(ctx context.Context, s api.Settings) (*api.Settings, error) {
	var out api.Settings
	if err := n.c.do(ctx, call{route: routePutSettings, params: []string{n.ns}, body: s, idempotent: s.Version == 0}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PatchSettings applies a JSON merge patch (RFC 7396) to the settings: a map such as
// {"diversity": 0.5, "rerank": nil} (nil returns a setting to the default). Without a
// "version" it is retried: a merge patch applied twice gives what it gave once. With one it
// is not, as for PutSettings.
func (n *Namespace) PatchSettings(ctx context.Context, patch map[string]any) (*api.Settings, error) {
	var out api.Settings
	_, versioned := patch["version"]
	if err := n.c.do(ctx, call{route: routePatch, params: []string{n.ns}, body: patch, idempotent: !versioned}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SettingsHistory returns the settings' audit trail, newest first (limit 0: the server's
// default of 50).
func (n *Namespace) SettingsHistory(ctx context.Context, limit int) ([]api.SettingsChange, error) {
	var out api.SettingsHistory
	if err := n.c.do(ctx, call{route: routeHistory, params: []string{n.ns}, query: limitQuery(limit), idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Changes, nil
}
