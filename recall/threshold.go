package recall

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
)

// thresholds makes the threshold decision of each ambient turn (DESIGN §7): under the
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

// policy is the threshold policy of a request: its own, else the namespace settings' (laid
// over the options by WithSettings), else the PolicyFor hook's, else the bandit. A request
// may ask for fixed:<x> or off only when its conversation is in no experiment.
func (p *Pipeline) policy(ctx context.Context, req *Request) (predict.Policy, error) {
	name := req.ThresholdPolicy
	if name != "" && p.opts.InExperiment != nil {
		pol, err := predict.ParsePolicy(name, "threshold_policy")
		if err != nil {
			return predict.Policy{}, err
		}
		if pol.Name != predict.PolicyBandit && pol.Name != predict.PolicyFixedDefault {
			in, err := p.opts.InExperiment(ctx, req.Namespace, req.ConversationID)
			if err != nil {
				return predict.Policy{}, err
			}
			if in {
				return predict.Policy{}, models.Invalid("threshold_policy", "conversation %q is in an experiment, whose variant sets the threshold policy: %s is not allowed", models.Clip(req.ConversationID, 64), pol.Name)
			}
		}
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
	threshold, arm, prob := th.bandit.Decide(pol, post, in.convType, "", th.rng)
	th.mu.Unlock()
	return &models.Decision{Namespace: req.Namespace, TurnID: in.turnID, ConversationID: req.ConversationID,
		ConvType: in.convType, Policy: pol.Name, Arm: arm, Threshold: threshold, Prob: prob, At: req.Now.UTC()}, nil
}

// recordDecision stores the turn's decision with how many memories it surfaced. A turn id
// the bot sends again keeps its first decision: replacing it could reward the turn twice.
func (p *Pipeline) recordDecision(ctx context.Context, d *models.Decision, surfaced int) error {
	if d == nil {
		return nil
	}
	d.Surfaced = surfaced
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
