package recall_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/recall"
)

// TestSurfacingRecordsWhatAsked: a surfacing records the analysed words of the message that
// asked — the query, else the latest message, a lone message too — never the window's
// earlier messages, so a memory used in the turn cannot learn them (feedback expansion).
func TestSurfacingRecordsWhatAsked(t *testing.T) {
	e := newEnv(t)
	e.add(t, "a", mem(models.KindFact, "The allotment by the canal grows runner beans and marrows.", t0.Add(-time.Hour)))
	earlier := recall.Message{Content: "The boiler broke again and the plumber never called back."}
	latest := recall.Message{Content: "Are the runner beans at the allotment ready yet?"}
	for i, tc := range []struct {
		name     string
		mode     models.Mode
		query    string
		messages []recall.Message
		want     []string
	}{
		{"ambient window", models.ModeAmbient, "", []recall.Message{earlier, latest}, []string{"runner", "bean", "allot", "readi", "yet"}},
		{"lone message", models.ModeAmbient, "", []recall.Message{latest}, []string{"runner", "bean", "allot", "readi", "yet"}},
		{"search by messages", models.ModeSearch, "", []recall.Message{earlier, latest}, []string{"runner", "bean", "allot", "readi", "yet"}},
		{"query beside the window", models.ModeAmbient, "what grows by the canal?", []recall.Message{earlier, latest}, []string{"grow", "canal"}},
	} {
		resp, err := e.p.Recall(context.Background(), &recall.Request{Namespace: "a", ConversationID: fmt.Sprint("c", i),
			Mode: tc.mode, Query: tc.query, Messages: tc.messages, ThresholdPolicy: "off", Rerank: "off", Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) == 0 {
			t.Fatalf("%s: nothing surfaced", tc.name)
		}
		s, err := e.store.GetSurfacing(context.Background(), "a", resp.Results[0].SurfacingID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(s.Terms, tc.want) {
			t.Errorf("%s: the surfacing recorded %v, want %v", tc.name, s.Terms, tc.want)
		}
	}
}
