package app

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
	"github.com/salience-ai/salience/internal/testserver"
)

// TestExampleBotAgainstTheBinary runs examples/bot as docs/clients.md says — built, a line
// piped to it per conversation — against the real `salience serve` process: what the first
// conversation stored, the second recalls. The bot reaches the server through its flags and
// environment, and by default looks where `make run` listens.
func TestExampleBotAgainstTheBinary(t *testing.T) {
	bin := binary(t)
	bot := filepath.Join(t.TempDir(), "bot")
	if out, err := exec.Command("go", "build", "-o", bot, "github.com/salience-ai/salience/examples/bot").CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/bot: %v\n%s", err, out)
	}
	p := startBinary(t, bin, t.TempDir())

	runBot := func(stdin string, env []string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bot, args...)
		cmd.Env = append(os.Environ(), append([]string{"SALIENCE_URL=", "SALIENCE_API_KEY="}, env...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("bot %v: %v\nstdout: %s\nstderr: %s", args, err, out, stderr.String())
		}
		return string(out)
	}

	// Without --url or SALIENCE_URL the bot looks where `salience serve` listens by default.
	if out, err := exec.Command(bot, "-h").CombinedOutput(); !strings.Contains(string(out), "http://"+DefaultAddr) {
		t.Errorf("bot -h (%v) does not default to the server's address %s:\n%s", err, DefaultAddr, out)
	}

	// printf 'I keep my bees on the roof of the old cannery.\n' | go run ./examples/bot --conversation first
	const fact = "I keep my bees on the roof of the old cannery."
	first := runBot(fact+"\n", []string{"SALIENCE_URL=" + p.base}, "--conversation", "first")
	if strings.TrimSpace(first) != "Noted." {
		t.Errorf("first conversation, on an empty server, answered %q, want \"Noted.\"", first)
	}
	// printf 'Where are my bees?\n' | go run ./examples/bot --conversation second
	second := runBot("Where are my bees?\n", nil, "--server", p.base, "--conversation", "second")
	if want := "I remember: " + fact; strings.TrimSpace(second) != want {
		t.Errorf("second conversation answered %q, want %q", second, want)
	}

	// Both turns of both conversations are stored in the bot's default namespace.
	hc := &http.Client{Transport: testserver.NewValidator(t, nil)}
	res, err := hc.Get(p.base + "/v1/namespaces/example-bot/memories")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list api.ListMemoriesResponse
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("listing example-bot: %d %v", res.StatusCode, err)
	}
	if list.Total != 4 {
		t.Errorf("example-bot holds %d memories, want the 4 turns of two conversations", list.Total)
	}
}
