package nlp

import (
	"slices"
	"testing"

	"github.com/salience-ai/salience/models"
)

// labelledConversations are messages labelled by hand with the type of conversation they
// come from; none of them is a test sentence of TestInferConversationType.
var labelledConversations = []struct {
	text, want string
}{
	{"the deploy failed again with a timeout talking to the database", models.ConvDebugging},
	{"after the upgrade the app crashes on startup, here's the traceback", models.ConvDebugging},
	{"my test is failing with an undefined variable error", models.ConvDebugging},
	{"it stopped working when I changed the config, no idea why", models.ConvDebugging},
	{"segfault in the parser when the input is empty", models.ConvDebugging},
	{"the compiler throws an exception on line 40", models.ConvDebugging},
	{"how should I structure the migration scripts?", models.ConvHelpSeeking},
	{"could you help me write a cover letter", models.ConvHelpSeeking},
	{"what should I pack for a week in Iceland", models.ConvHelpSeeking},
	{"is there a way to export the calendar to a spreadsheet", models.ConvHelpSeeking},
	{"any advice for a first-time manager?", models.ConvHelpSeeking},
	{"can you explain how mortgages work, please", models.ConvHelpSeeking},
	{"what would happen if the moon were twice as close", models.ConvExploration},
	{"let's brainstorm some names for the project", models.ConvExploration},
	{"hypothetically, could a city run without cars", models.ConvExploration},
	{"I've been thinking about alternatives to the current design", models.ConvExploration},
	{"just wondering how octopuses see colour", models.ConvExploration},
	{"good morning! slept well?", models.ConvCasual},
	{"haha that's awesome, congrats on the new job", models.ConvCasual},
	{"so tired after the kids' birthday party", models.ConvCasual},
	{"hey, hows it going? miss you", models.ConvCasual},
	{"we had so much fun on vacation with friends", models.ConvCasual},
	{"the invoice is attached", models.ConvOther},
	{"Caroline moved to Berlin in March", models.ConvOther},
	{"the quarterly numbers are in the shared folder", models.ConvOther},
}

// TestClassifyLabelled measures the classifier on labelled examples: at least 22 of 25
// right, and every example it gets wrong is listed.
func TestClassifyLabelled(t *testing.T) {
	right := 0
	for _, c := range labelledConversations {
		got := ClassifyConversation(c.text)
		if got.Type == c.want {
			right++
		} else {
			t.Logf("%q: %s (cues %v), labelled %s", c.text, got.Type, got.Cues, c.want)
		}
	}
	if right < 22 {
		t.Errorf("%d of %d labelled examples right, want ≥ 22", right, len(labelledConversations))
	}
}

// TestClassifyReasons checks that the classification says why, with the scores summed from
// the cue weights.
func TestClassifyReasons(t *testing.T) {
	got := ClassifyConversation("Please help, the build crashed with an error")
	// please 1 + help 1 (help-seeking 2); crashed 2 + error 2 (debugging 4).
	if got.Type != models.ConvDebugging || got.Scores[models.ConvDebugging] != 4 || got.Scores[models.ConvHelpSeeking] != 2 {
		t.Errorf("got %+v, want debugging 4 over help-seeking 2", got)
	}
	want := []string{"help-seeking: please", "help-seeking: help", "debugging: crashed", "debugging: error"}
	if !slices.Equal(got.Cues, want) {
		t.Errorf("cues %v, want %v", got.Cues, want)
	}
	if o := ClassifyConversation("the invoice is attached"); o.Type != models.ConvOther || o.Cues != nil || o.Scores != nil {
		t.Errorf("no cues: %+v, want other with no reasons", o)
	}
	// A tie goes to the type listed first: "fix" (debugging 1) vs "please" (help-seeking 1).
	if tie := ClassifyConversation("please fix"); tie.Type != models.ConvDebugging {
		t.Errorf("tie: %+v, want debugging", tie)
	}
}
