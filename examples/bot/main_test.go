package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/internal/testserver"
)

// TestBotAgainstTheRealServer runs the loop on a scripted conversation, then checks through
// the API that it stored its turns, recalled across conversations and reported engagement.
func TestBotAgainstTheRealServer(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{WithKeys: true})
	cfg := config{URL: srv.URL, Key: testserver.KeyA, Namespace: "a", Conversation: "first"}
	var out bytes.Buffer
	if err := run(context.Background(), cfg, strings.NewReader("I keep my bees on the roof of the old cannery.\n\nI like tea.\n"), &out); err != nil {
		t.Fatal(err)
	}
	if want := "Noted.\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("first conversation:\n%s\nwant it to start with\n%s", out.String(), want)
	}

	// A new conversation recalls what the first one stored.
	out.Reset()
	cfg.Conversation = "second"
	if err := run(context.Background(), cfg, strings.NewReader("Where are my bees?\n"), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 || lines[0] != "I remember: I keep my bees on the roof of the old cannery." {
		t.Errorf("second conversation = %q, want the bees recalled", lines)
	}

	c, _ := client.New(srv.URL, client.WithKey(testserver.KeyA))
	ns := c.Namespace("a")
	page, err := ns.List(context.Background(), client.ListOptions{Kinds: []string{"turn"}})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 6 { // three user messages and three replies
		t.Errorf("stored %d turns, want 6", page.Total)
	}
	m, err := ns.Metrics(context.Background(), time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Events.Used < 1 || m.Events.Total != m.Overall.Surfaced-m.Overall.Pending {
		t.Errorf("events %+v over %+v: want a use, and every surfacing reported", m.Events, m.Overall)
	}

	// A key without the namespace: the loop stops with the server's refusal.
	cfg.Namespace = "b"
	err = run(context.Background(), cfg, strings.NewReader("hello\n"), &out)
	if err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("run in namespace b with key A = %v, want forbidden", err)
	}
}

// TestBotDoesNotEchoItself asks the same question in three conversations after the fact that
// answers it. The question stored the first time, and the bot's own reply (stored with role
// assistant), match it word for word; they must not outrank the fact, or the bot answers
// with an echo, reports it used, and the next reply echoes the echo.
func TestBotDoesNotEchoItself(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{WithKeys: true})
	cfg := config{URL: srv.URL, Key: testserver.KeyA, Namespace: "a", Conversation: "told"}
	const fact = "The spare key hangs on the hook behind the boiler."
	var out bytes.Buffer
	if err := run(context.Background(), cfg, strings.NewReader(fact+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	for _, conv := range []string{"ask-1", "ask-2", "ask-3"} {
		out.Reset()
		cfg.Conversation = conv
		if err := run(context.Background(), cfg, strings.NewReader("Where is the spare key?\n"), &out); err != nil {
			t.Fatal(err)
		}
		if got, want := strings.TrimSpace(out.String()), "I remember: "+fact; got != want {
			t.Fatalf("%s: reply %q, want %q", conv, got, want)
		}
	}

	c, _ := client.New(srv.URL, client.WithKey(testserver.KeyA))
	page, err := c.Namespace("a").List(context.Background(), client.ListOptions{Kinds: []string{"turn"}, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]int{}
	for _, m := range page.Memories {
		if m.Source == nil {
			t.Fatalf("turn %q stored without a source", m.Content)
		}
		roles[m.Source.Role]++
		if strings.Contains(m.Content, "I remember: I remember:") {
			t.Errorf("an echo of an echo was stored: %q", m.Content)
		}
	}
	if roles[client.RoleUser] != 4 || roles[client.RoleAssistant] != 4 {
		t.Errorf("roles of the stored turns = %v, want 4 user and 4 assistant", roles)
	}
}
