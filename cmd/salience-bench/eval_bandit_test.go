package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestEvalBanditAndPredict runs both simulations through the command line: the last line is
// JSON, the help text states the reward model, bad flags are errors, and an unreachable
// --min-share fails the command.
func TestEvalBanditAndPredict(t *testing.T) {
	ctx := context.Background()
	env := func(string) string { return "" }
	for _, args := range [][]string{
		{"bandit", "--runs", "2", "--min-share", "0.5"},
		{"predict", "--conversations", "30", "--warmup", "10"},
	} {
		var out, errb bytes.Buffer
		if err := runEval(ctx, args, env, &out, &errb); err != nil {
			t.Fatalf("%v: %v (%s)", args, err, errb.String())
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		var v map[string]any
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &v); err != nil {
			t.Errorf("%v: last line not JSON: %v", args, err)
		}
	}
	var out, errb bytes.Buffer
	if err := runEval(ctx, []string{"bandit", "--runs", "1", "--min-share", "1.01"}, env, &out, &errb); err == nil {
		t.Error("--min-share 1.01 passed")
	}
	errb.Reset()
	if err := runEval(ctx, []string{"bandit", "-h"}, env, &out, &errb); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(errb.String(), "Reward model:") || !strings.Contains(errb.String(), "0.2 + 0.6·(used/3)") {
		t.Errorf("help: %v\n%s", err, errb.String())
	}
	for _, args := range [][]string{{"bandit", "--gamma", "0"}, {"predict", "--threshold", "2"}, {"predict", "--warmup", "400"}} {
		if err := runEval(ctx, args, env, &out, &errb); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
