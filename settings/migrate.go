package settings

import (
	"context"
	"fmt"

	"github.com/salience-ai/salience/models"
)

// LegacyPolicyPrefix starts the hidden state key that overrode a namespace's decay policy
// before settings existed: "policy/<ns>" holding "linear" or "fsrs".
const LegacyPolicyPrefix = models.LegacyPolicyKeyPrefix

// MigrationBy is the audit trail's author of migrated settings.
const MigrationBy = "migration"

// MigrateDecayPolicies moves every legacy "policy/<ns>" override of a namespace holding
// memories into that namespace's settings (decay.policy), audited as MigrationBy, and then
// empties the old key, which nothing reads any more. Settings that already name a decay
// policy win: they were written later, through the API. A legacy value that names no policy
// is dropped (the old reader ignored it too). It returns the namespaces migrated; running
// it again finds nothing to do.
func (s *Service) MigrateDecayPolicies(ctx context.Context) ([]string, error) {
	nss, err := s.store.Namespaces(ctx)
	if err != nil {
		return nil, fmt.Errorf("settings migration: %w", err)
	}
	var moved []string
	for _, ns := range nss {
		name, err := s.store.GetState(ctx, LegacyPolicyPrefix+ns)
		if err != nil {
			return moved, fmt.Errorf("settings migration of %s: %w", ns, err)
		}
		if name == "" {
			continue
		}
		if name == "linear" || name == "fsrs" {
			_, err := s.Update(ctx, ns, MigrationBy, func(cur *models.Settings) (*models.Settings, error) {
				if cur.Decay == nil || cur.Decay.Policy == "" {
					cur.Decay = &models.DecaySettings{Policy: name}
				}
				return cur, nil
			})
			if err != nil {
				return moved, fmt.Errorf("settings migration of %s: %w", ns, err)
			}
			moved = append(moved, ns)
		}
		if err := s.store.SetState(ctx, LegacyPolicyPrefix+ns, ""); err != nil {
			return moved, fmt.Errorf("settings migration of %s: %w", ns, err)
		}
	}
	return moved, nil
}
