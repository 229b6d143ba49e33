// Command bot is a small chat loop over Salience, to copy from: before each reply it recalls
// what is worth having in mind, it replies (here a stand-in for your model), it stores the
// turn, and it reports which recalled memories the reply used — the report is what teaches
// recall what helps.
//
// Start a server (make run), then:
//
//	go run ./examples/bot
//	> I keep my bees on the roof of the old cannery.
//	> Where are my bees?
//
// It reads one user message a line from stdin until EOF. Flags: --server (SALIENCE_URL,
// default http://127.0.0.1:7700), --key (SALIENCE_API_KEY), --ns, --conversation.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := config{}
	flag.StringVar(&cfg.URL, "server", envOr("SALIENCE_URL", "http://127.0.0.1:7700"), "Salience server")
	flag.StringVar(&cfg.URL, "url", cfg.URL, "deprecated: --server")
	flag.StringVar(&cfg.Key, "key", os.Getenv("SALIENCE_API_KEY"), "API key (none when the server runs without keys)")
	flag.StringVar(&cfg.Namespace, "ns", "example-bot", "namespace of the bot's memories")
	flag.StringVar(&cfg.Conversation, "conversation", "", "conversation id (default: a new one)")
	flag.Parse()
	if err := run(ctx, cfg, os.Stdin, os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "bot:", err)
		os.Exit(1)
	}
}

type config struct {
	URL, Key, Namespace, Conversation string
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// run is the bot loop: one user message a line of in, one reply a line of out.
func run(ctx context.Context, cfg config, in io.Reader, out io.Writer) error {
	c, err := client.New(cfg.URL, client.WithKey(cfg.Key), client.WithUserAgent("salience-example-bot"))
	if err != nil {
		return err
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.WaitReady(wait, 200*time.Millisecond); err != nil {
		return fmt.Errorf("the server at %s is not ready (is it running? make run): %w", cfg.URL, err)
	}
	ns := c.Namespace(cfg.Namespace)
	conv := cfg.Conversation
	if conv == "" {
		conv = "conv-" + time.Now().UTC().Format("20060102T150405.000")
	}

	// A bot that keeps a system prompt per conversation would also fetch the startup
	// briefing here (Mode: client.ModeStartup: anchors, important facts, crystals, summaries
	// and the conversation's latest turns) and put its Context in that prompt.

	var history []api.Message
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		msg := strings.TrimSpace(sc.Text())
		if msg == "" {
			continue
		}
		// 1. Recall before replying, with the message and the last few turns.
		rec, err := ns.Recall(ctx, api.RecallRequest{ConversationID: conv, Query: msg, Messages: lastN(history, 4), TokenBudget: 500})
		if err != nil {
			var e *client.Error
			if errors.As(err, &e) {
				return fmt.Errorf("recall refused (%s, field %q): %s", e.Code, e.Field, e.Message)
			}
			return err
		}

		// 2. Reply. A real bot puts rec.Context in its model's prompt; this one shows the
		// best memory, and says which it used.
		reply, used := respond(msg, rec)
		fmt.Fprintln(out, reply)

		// 3. Store the turn, so later conversations can recall it.
		if _, err := ns.StoreBatch(ctx, []api.MemoryInput{
			{Kind: "turn", Content: msg, Source: &api.Source{ConversationID: conv, Speaker: "user", Role: client.RoleUser}},
			{Kind: "turn", Content: reply, Source: &api.Source{ConversationID: conv, Speaker: "bot", Role: client.RoleAssistant}},
		}); err != nil {
			return err
		}
		history = append(history, api.Message{Speaker: "user", Content: msg}, api.Message{Speaker: "bot", Content: reply})

		// 4. Report what the reply did with each memory it was shown. Reports are
		// idempotent, so the client retries them safely.
		var events []api.EngagementEvent
		for i, r := range rec.Results {
			typ := client.EventIgnored
			if used[i] {
				typ = client.EventUsed
			}
			events = append(events, api.EngagementEvent{ID: r.SurfacingID + "-" + typ, SurfacingID: r.SurfacingID, Type: typ})
		}
		if len(events) > 0 {
			rep, err := ns.Report(ctx, events...)
			if err != nil {
				return err
			}
			if rep.Rejected > 0 {
				fmt.Fprintf(out, "[%d engagement events rejected]\n", rep.Rejected)
			}
		}
	}
	return sc.Err()
}

// respond stands in for a model: it answers with the best recalled memory, if any, and
// reports that one as used.
func respond(msg string, rec *api.RecallResponse) (string, map[int]bool) {
	if len(rec.Results) == 0 {
		return "Noted.", nil
	}
	best := rec.Results[0]
	return "I remember: " + strings.Join(strings.Fields(best.Content), " "), map[int]bool{0: true}
}

func lastN(ms []api.Message, n int) []api.Message {
	if len(ms) > n {
		return ms[len(ms)-n:]
	}
	return ms
}
