package recall_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// Echoes are not answers: the user's earlier question and the bot's reply repeating it match
// the same question word for word, and must not outrank the fact that answers it — in search
// and in ambient recall.
func TestEchoesDoNotOutrankTheAnswer(t *testing.T) {
	const ask = "Which shelf did the atlas end up on?"
	for _, mode := range []models.Mode{models.ModeSearch, models.ModeAmbient} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t)
			fact := mem(models.KindFact, "The atlas ended up on the top shelf, next to the cookbooks.", t0.Add(-48*time.Hour))
			question := mem(models.KindTurn, ask, t0.Add(-2*time.Hour))
			question.Source = models.Source{ConversationID: "c0", Speaker: "user", Role: models.RoleUser}
			reply := mem(models.KindTurn, "I remember: "+ask, t0.Add(-2*time.Hour+time.Second))
			reply.Source = models.Source{ConversationID: "c0", Speaker: "bot", Role: models.RoleAssistant}
			e.add(t, "a", fact, question, reply,
				mem(models.KindFact, "The kettle in the office whistles when it boils.", t0.Add(-72*time.Hour)))
			req := &recall.Request{Namespace: "a", Mode: mode, ConversationID: "c1", Explain: true, ThresholdPolicy: "off"}
			if mode == models.ModeSearch {
				req.Query = ask
			} else {
				req.Messages = []recall.Message{{Speaker: "user", Content: "morning!"}, {Speaker: "user", Content: ask}}
			}
			resp, err := e.p.Recall(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range resp.Results {
				got = append(got, r.Content)
			}
			if len(got) == 0 || !strings.Contains(got[0], "cookbooks") {
				t.Fatalf("results = %q, want the answering fact first", got)
			}
			for _, r := range resp.Results[1:] {
				if r.PUse > resp.Results[0].PUse {
					t.Errorf("echo %q has p_use %.2f over the answer's %.2f", r.Content, r.PUse, resp.Results[0].PUse)
				}
			}
		})
	}
}
