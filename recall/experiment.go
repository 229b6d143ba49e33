package recall

import (
	"context"

	"github.com/salience-ai/salience/experiment"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/rerank"
)

// ExperimentSource returns the experiment a namespace runs (experiment.Service, which
// caches it); nil and no error when it runs none.
type ExperimentSource interface {
	Running(ctx context.Context, ns string) (*models.Experiment, error)
}

// arm is the experiment variant a request's conversation is assigned to.
type arm struct {
	experiment string
	variant    string
	overrides  models.Overrides
}

// WithOverrides returns o with an experiment variant's overrides laid over it. It comes
// after WithSettings: precedence is defaults < namespace settings < variant (docs/design.md#experiments).
// The threshold and rerank policies are per request, not options: the pipeline applies
// them (policy, rerank).
func (o Options) WithOverrides(v models.Overrides) Options {
	o = o.WithSettings(&models.Settings{Weights: v.Weights, FreshnessHalfLifeHours: v.FreshnessHalfLifeHours, Diversity: v.Diversity})
	switch v.RelevanceModel {
	case "off":
		o.NoModel = true
	case "on":
		o.NoModel = false
	}
	return o
}

// forExperiment returns the pipeline with the variant of the request's conversation
// applied, if its namespace runs an experiment. Assignment is by the conversation alone
// (experiment.Assign): a request cannot choose its variant, and cannot set a knob its
// experiment decides — its own threshold policy, or a rerank mode when the variant sets the
// rerank policy, is EINVALID naming the field. The startup package and calls without a
// conversation are in no experiment. An experiment that cannot be read is said in degraded
// and the request runs without it, as with unreadable settings.
func (p *Pipeline) forExperiment(ctx context.Context, req *Request) (*Pipeline, string, error) {
	if p.opts.Experiments == nil || req.Mode == models.ModeStartup || req.ConversationID == "" {
		return p, "", nil
	}
	e, err := p.opts.Experiments.Running(ctx, req.Namespace)
	if err != nil {
		return p, "experiment: " + models.ErrorMessage(err), nil
	}
	if e == nil {
		return p, "", nil
	}
	v := experiment.Assign(e, req.ConversationID)
	if v == nil {
		return p, "", nil
	}
	if req.ThresholdPolicy != "" {
		return nil, "", models.Invalid("threshold_policy", "conversation %s is in experiment %s (variant %s), which decides its threshold policy; leave threshold_policy out",
			models.Clip(req.ConversationID, 64), e.ID, v.Name)
	}
	if v.Overrides.Rerank != "" && req.Rerank != rerank.ModeAuto {
		return nil, "", models.Invalid("rerank", "conversation %s is in experiment %s (variant %s), which sets the rerank policy; leave rerank out or auto",
			models.Clip(req.ConversationID, 64), e.ID, v.Name)
	}
	q := *p
	q.opts = p.opts.WithOverrides(v.Overrides)
	q.arm = &arm{experiment: e.ID, variant: v.Name, overrides: v.Overrides}
	return &q, "", nil
}

// variant returns the experiment and variant names of the request ("" outside one).
func (p *Pipeline) variant() (experimentID, variant string) {
	if p.arm == nil {
		return "", ""
	}
	return p.arm.experiment, p.arm.variant
}

// rerankPolicy is the rerank policy the request's variant sets ("" = the namespace's).
func (p *Pipeline) rerankPolicy() string {
	if p.arm == nil {
		return ""
	}
	return p.arm.overrides.Rerank
}
