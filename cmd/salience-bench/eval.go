package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/salience-ai/salience/engagement"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/internal/app"
	"github.com/salience-ai/salience/maintenance"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/predict"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/rerank"
	"github.com/salience-ai/salience/store/sqlite"
)

// runEval runs `salience-bench eval locomo [--locomo DIR]`: it ingests each conversation into a fresh
// embedded store through the real ingest path, asks every question through the real recall
// pipeline, and prints evidence recall@5/10/25 and hit@10 per category, the last line JSON.
func runEval(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "bandit":
			return runEvalBandit(args[1:], stdout, stderr)
		case "predict":
			return runEvalPredict(args[1:], stdout, stderr)
		case "paraphrase":
			return runEvalParaphrase(ctx, args[1:], getenv, stdout, stderr)
		}
	}
	if len(args) == 0 || args[0] != "locomo" {
		return errors.New("usage: salience-bench eval locomo [--locomo DIR] [--embedder E [--embed-* ...]] [--learn | --natural | --ambient] [--rerank [--rerank-url URL] [--rerank-fake-latency D] [--budget D]]\n       salience-bench eval bandit [--runs N] [--seed S] [--gamma G]\n       salience-bench eval predict [--conversations N] [--seed S]\n       salience-bench eval paraphrase [--embedder ...] [--k K] [-v]")
	}
	fs := flag.NewFlagSet("eval locomo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("locomo", defaultLocomo(), "directory of LoCoMo-format conversation files (*.json); default "+locomoDev+" when it is there")
	ec := app.MeasureEmbedderFlags(fs)
	learn := fs.Bool("learn", false, "replay half the questions with engagement feedback and score the other half with and without it")
	natural := fs.Bool("natural", false, "play each conversation as a bot does (an ambient recall before every turn, honest reports) beside a twin that never reports, and score both")
	ambient := fs.Bool("ambient", false, "replay every question in ambient mode under each threshold policy (off, fixed:default, each fixed arm, bandit, bandit with reports withheld) and print precision, hit rate, used and surfaced per turn and mean reward")
	er := evalRerankFlags(fs)
	sc := app.StoreFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if err := app.ApplyEnv(fs, getenv); err != nil {
		return err
	}
	if err := sc.Validate(); err != nil {
		return err
	}
	if *data == "" {
		return fmt.Errorf("eval locomo: where is the LoCoMo data? give --locomo DIR (or SALIENCE_LOCOMO): a directory of LoCoMo-format *.json files (%s is not there)", locomoDev)
	}
	emb, err := app.FinishEmbedderFlags(fs, ec, getenv)
	if err != nil {
		return err
	}
	if sc.Kind == app.StoreNeo4j && (*learn || *ambient || *natural) {
		return errors.New("eval locomo --learn compares two stores; it runs on the embedded store only")
	}
	rr, stopRerank, err := er.start(stderr)
	if err != nil {
		return err
	}
	defer stopRerank()
	if rr != nil && *learn {
		return errors.New("eval locomo: --rerank measures retrieval; run it without --learn")
	}
	convs, err := eval.LoadDir(*data)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "salience-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	engine := func(name string) (eval.Engine, func(), error) {
		if sc.Kind == app.StoreNeo4j {
			return neo4jEngine(ctx, sc, emb, rr, convs)
		}
		st, err := sqlite.Open(filepath.Join(dir, name+".db"), sqlite.Options{Logger: app.Quiet()})
		if err != nil {
			return eval.Engine{}, nil, err
		}
		if err := st.Rebuild(ctx); err != nil {
			st.Close()
			return eval.Engine{}, nil, err
		}
		return evalEngine(st, emb, rr), func() { st.Close() }, nil
	}
	if *natural {
		if rr != nil || *learn || *ambient {
			return errors.New("eval locomo --natural runs alone: without --rerank, --learn and --ambient")
		}
		with, closeW, err := engine("natural-reporting")
		if err != nil {
			return err
		}
		defer closeW()
		silent, closeS, err := engine("natural-silent")
		if err != nil {
			return err
		}
		defer closeS()
		rep, err := eval.Natural(ctx, with, silent, convs, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "LoCoMo natural conversation, %d conversations from %s\n", len(convs), *data)
		rep.Print(stdout)
		return nil
	}
	if *ambient {
		if rr != nil || *learn {
			return errors.New("eval locomo --ambient runs alone: without --rerank and --learn")
		}
		rep := &eval.AmbientReport{}
		runs := []ambientRun{{predict.PolicyOff, false}, {predict.PolicyFixedDefault, false}}
		for _, a := range predict.Arms {
			runs = append(runs, ambientRun{fmt.Sprintf("fixed:%g", a), false})
		}
		runs = append(runs, ambientRun{predict.PolicyBandit, false}, ambientRun{predict.PolicyBandit, true})
		for i, r := range runs {
			e, closeE, err := engine(fmt.Sprintf("ambient-%d", i))
			if err != nil {
				return err
			}
			s, err := eval.Ambient(ctx, e, convs, r.policy, r.withhold, stderr)
			closeE()
			if err != nil {
				return err
			}
			rep.Rows = append(rep.Rows, s)
		}
		fmt.Fprintf(stdout, "LoCoMo ambient replay, %d conversations from %s\n", len(convs), *data)
		rep.Print(stdout)
		return nil
	}
	a, closeA, err := engine("without")
	if err != nil {
		return err
	}
	defer closeA()
	if *learn {
		b, closeB, err := engine("with")
		if err != nil {
			return err
		}
		defer closeB()
		rep, err := eval.Learn(ctx, a, b, convs, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "LoCoMo learning loop, %d conversations from %s\n", len(convs), *data)
		rep.Print(stdout)
		return nil
	}
	rep, err := eval.RunWith(ctx, a.Ingest, a.Recall, convs, stderr, er.options(rr))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "LoCoMo evidence recall, %d conversations from %s\n", len(convs), *data)
	rep.Print(stdout)
	return nil
}

// evalEngine is the pipeline an evaluation runs on st, the same for either store; rr (nil:
// none) reranks recall.
func evalEngine(st models.Store, emb embed.Embedder, rr *rerank.Reranker) eval.Engine {
	return eval.Engine{
		Ingest:     ingest.New(st, emb),
		Recall:     recall.New(st, emb, recall.Options{Reranker: app.RecallReranker(rr), Seed: 1}),
		Engagement: engagement.NewService(st, engagement.ServiceOptions{}),
		Reward:     maintenance.New(st, maintenance.Options{}).RewardTurn,
	}
}

// neo4jEngine runs the evaluation on the Neo4j store: each conversation's namespace
// (locomo-<name>) is emptied first, so a run starts from nothing as on a fresh SQLite file.
func neo4jEngine(ctx context.Context, sc *app.StoreConfig, emb embed.Embedder, rr *rerank.Reranker, convs []*eval.Conversation) (eval.Engine, func(), error) {
	st, _, _, err := app.OpenStore(ctx, sc, "", app.Quiet())
	if err != nil {
		return eval.Engine{}, nil, err
	}
	for _, c := range convs {
		if _, err := st.DeleteNamespace(ctx, eval.Namespace(c)); err != nil {
			st.Close()
			return eval.Engine{}, nil, err
		}
	}
	return evalEngine(st, emb, rr), func() { st.Close() }, nil
}

// locomoDev is where the dev split of LoCoMo sits beside a checkout of the project.
var locomoDev = filepath.Join("..", "shared", "data", "locomo-dev")

// defaultLocomo is locomoDev when it is there; else --locomo (or SALIENCE_LOCOMO) must say.
func defaultLocomo() string {
	if _, err := os.Stat(locomoDev); err != nil {
		return ""
	}
	return locomoDev
}

// ambientRun is one replay of `eval locomo --ambient`: a threshold policy, and whether the
// bot's reports are withheld (the bandit's twin that learns nothing).
type ambientRun struct {
	policy   string
	withhold bool
}
