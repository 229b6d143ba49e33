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
