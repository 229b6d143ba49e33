package maintenance

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
)

// Thresholds reads a namespace's threshold bandit for GET /v1/namespaces/{ns}/thresholds
// (server.ThresholdReporter): every conversation type, at its prior when never rewarded, then
// any other posterior the namespace holds (experiment variants), by key.
type Thresholds struct {
	Store interface {
		GetState(ctx context.Context, key string) (string, error)
	}
	Bandit predict.Bandit // zero: predict.DefaultBandit()
}

// Thresholds returns the namespace's posteriors in their wire form.
func (t Thresholds) Thresholds(ctx context.Context, ns string) (*api.ThresholdsResponse, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	b := t.Bandit
	if b == (predict.Bandit{}) {
		b = predict.DefaultBandit()
	}
	raw, err := t.Store.GetState(ctx, predict.StateKey(ns))
	if err != nil {
		return nil, err
	}
	post, err := predict.DecodePosteriors(raw)
	if err != nil {
		return nil, models.Errorf(models.EINTERNAL, "%v", err)
	}
	keys := []string{models.ConvDebugging, models.ConvHelpSeeking, models.ConvExploration, models.ConvCasual, models.ConvOther}
	var extra []string
	for k := range post.Keys {
		if !slices.Contains(keys, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	out := &api.ThresholdsResponse{Namespace: ns, Types: []api.TypeThresholds{}}
	for _, key := range append(keys, extra...) {
		convType, variant, _ := strings.Cut(key, "@")
		tt := api.TypeThresholds{ConversationType: convType, Variant: variant, DefaultThreshold: predict.DefaultPUseThreshold(convType)}
		if p := post.Keys[key]; p != nil {
			tt.Updates, tt.UpdatedAt = p.Updates, p.UpdatedAt
		}
		bestMean := -1.0
		for k, a := range b.Arms(post, key, convType) {
			m := a.Mean()
			tt.Arms = append(tt.Arms, api.ThresholdArm{Threshold: predict.Arms[k], Alpha: a.Alpha, Beta: a.Beta, Mean: m})
			if m > bestMean {
				tt.Best, bestMean = predict.Arms[k], m
			}
		}
		out.Types = append(out.Types, tt)
	}
	return out, nil
}
