package recall

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
)

// thresholds makes the threshold decision of each ambient turn (docs/design.md#prediction-and-thresholds): under the
// bandit policy a Thompson-sampling draw from the namespace's posterior, which
// bandit-upkeep keeps in the store; under a fixed policy the fixed threshold. The decision,
// with how many memories the turn surfaced, is recorded after the turn (recordDecision), so
// the bandit learns from empty turns too.
type thresholds struct {
	bandit predict.Bandit
	mu     sync.Mutex
	rng    *rand.Rand // guarded by mu: Thompson draws
}

func newThresholds(seed uint64) *thresholds {
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	return &thresholds{bandit: predict.DefaultBandit(), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// policy is the threshold policy of a request: its experiment variant's, else its own (a
// request in an experiment has none: forExperiment refuses it), else the namespace
// settings' (laid over the options by WithSettings), else the PolicyFor hook's, else the
// bandit.
func (p *Pipeline) policy(ctx context.Context, req *Request) (predict.Policy, error) {
	name := req.ThresholdPolicy
	if p.arm != nil && p.arm.overrides.ThresholdPolicy != "" {
		name = p.arm.overrides.ThresholdPolicy
	}
	if name == "" {
		name = p.opts.ThresholdPolicy
	}
	if name == "" && p.opts.PolicyFor != nil {
		var err error
		if name, err = p.opts.PolicyFor(ctx, req.Namespace); err != nil {
			return predict.Policy{}, err
		}
	}
	return predict.ParsePolicy(name, "threshold_policy")
}

// decide returns the threshold decision of a turn; nil outside ambient mode, where nothing
// is gated by it and the type's static threshold is reported.
func (p *Pipeline) decide(ctx context.Context, req *Request, in *intake) (*models.Decision, error) {
	if req.Mode != models.ModeAmbient {
		return nil, nil
	}
	pol, err := p.policy(ctx, req)
	if err != nil {
		return nil, err
	}
	post := &predict.Posteriors{}
	if pol.Name == predict.PolicyBandit {
		raw, err := p.store.GetState(ctx, predict.StateKey(req.Namespace))
		if err != nil {
			return nil, err
		}
		if post, err = predict.DecodePosteriors(raw); err != nil {
			// A state this version cannot read is started over rather than failing recall.
			post = &predict.Posteriors{}
		}
	}
	th := p.thresholds
	th.mu.Lock()
	// Bandit posteriors are per variant (predict.PosteriorKey), so each variant's bandit
	// learns from its own turns only.
	expID, variant := p.variant()
	threshold, arm, prob := th.bandit.Decide(pol, post, in.convType, variant, th.rng)
	th.mu.Unlock()
	return &models.Decision{Namespace: req.Namespace, TurnID: in.turnID, ConversationID: req.ConversationID,
		ConvType: in.convType, Variant: variant, Experiment: expID, Policy: pol.Name, Arm: arm, Threshold: threshold,
		Prob: prob, At: req.Now.UTC(), Concepts: in.concepts}, nil
}

// recordDecision stores the turn's decision with how many memories it surfaced. A turn id
// the bot sends again keeps its first decision: replacing it could reward the turn twice.
func (p *Pipeline) recordDecision(ctx context.Context, d *models.Decision, surfaced int, latencyMS float64) error {
	if d == nil {
		return nil
	}
	d.Surfaced, d.LatencyMS = surfaced, latencyMS
	return p.store.Update(ctx, func(tx models.Tx) error {
		switch _, err := tx.GetDecision(d.Namespace, d.TurnID); models.ErrorCode(err) {
		case "":
			return nil
		case models.ENOTFOUND:
			return tx.PutDecision(d)
		default:
			return err
		}
	})
}
