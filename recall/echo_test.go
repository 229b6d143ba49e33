package recall

import (
	"testing"

	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

func TestIsQuestion(t *testing.T) {
	for text, want := range map[string]bool{
		"Which shelf did the atlas end up on?":         true,
		"which shelf did the atlas end up on":          true, // chat without punctuation
		"Gus: did you water the ferns":                 true, // a turn's speaker label aside
		"I moved the atlas. Which shelf was it again?": true,
		"The atlas is on the top shelf by the window.": false,
		"Which reminds me, the atlas went upstairs.":   false,
		"ferns": false,
		"I remember: Which shelf holds the atlas? ":    true,
		"Put the atlas back on the shelf, please!":     false,
		"The kettle whistles when the water is ready":  false,
		"Could you hand me the atlas (the big one)?\n": true,
		"\"Is the atlas upstairs?\"":                   true,
		"It was upstairs, which surprised me":          false,
	} {
		if got := isQuestion(text); got != want {
			t.Errorf("isQuestion(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestRestates(t *testing.T) {
	q := nlp.Terms("Which shelf did the atlas end up on?")
	for _, tc := range []struct {
		name                string
		memory              string
		question, assistant bool
		want                float64
	}{
		// The question asked again, in other function words: nothing beyond the query.
		{"same question", "Where did the atlas end up, which shelf?", true, false, 1},
		// The bot's reply holding the query: discounted by the share that is the query's
		// (3 of its 4 terms) times the query held (all of it).
		{"assistant echo", "I remember: Which shelf did the atlas end up on?", false, true, 0.75},
		// The bot's record of what it did keeps what it says beyond the query: 3 of 6 terms.
		{"assistant statement", "I put the atlas on the top shelf at the end of the day.", false, true, 0.5},
		// The answer holds the query's words and says more; it is no question and no reply.
		{"answer", "The atlas ended up on the top shelf by the window.", false, false, 0},
		// A question about more than the query keeps its match.
		{"broader question", "Which shelf did the atlas, the globe and the old maps of the harbour end up on?", true, false, 0},
		// A question holding too little of the query is not a restatement.
		{"other question", "Which shelf is free?", true, false, 0},
		// The bot's reply that does not hold the query is not an echo of it.
		{"assistant answer", "The top shelf, by the window.", false, true, 0},
	} {
		got := restates(nlp.Terms(tc.memory), q, tc.question, tc.assistant)
		if got != tc.want {
			t.Errorf("%s: restates = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Partial: four of five of the question's terms are the query's.
	if got := restates([]string{"a", "b", "c", "d", "x"}, []string{"a", "b", "c", "d"}, true, false); got != 0.8 {
		t.Errorf("partial restatement = %v, want 0.8", got)
	}
	if got := restates(nil, q, true, true); got != 0 {
		t.Errorf("empty memory restates %v", got)
	}
}

func TestMemoryRestates(t *testing.T) {
	q := nlp.Terms("Which shelf did the atlas end up on?")
	for _, tc := range []struct {
		content string
		role    models.Role
		want    float64
	}{
		// The bot asking the question back restates it whole, its own words around it aside.
		{"I remember: Which shelf did the atlas end up on?", models.RoleAssistant, 1},
		{"Good question. Which shelf did the atlas end up on? Let me think.", models.RoleAssistant, 1},
		// The same words from the user: a question, three of its four terms the query's.
		{"I remember: Which shelf did the atlas end up on?", models.RoleUser, 0.75},
		// Old data without a role reads as the user's.
		{"Which shelf did the atlas end up on?", "", 1},
		// A statement of the user's is never an echo.
		{"The atlas ended up on the top shelf.", models.RoleUser, 0},
		{"The atlas ended up on the top shelf.", "", 0},
	} {
		m := &models.Memory{Content: tc.content, Source: models.Source{Role: tc.role}}
		if got := memoryRestates(m, q); got != tc.want {
			t.Errorf("memoryRestates(%q, role %q) = %v, want %v", tc.content, tc.role, got, tc.want)
		}
	}
	if got := memoryRestates(&models.Memory{Content: "Which shelf?"}, nil); got != 0 {
		t.Errorf("no query terms: %v", got)
	}
}

// FuzzMemoryRestates: any text, as a question or as the bot's reply, restates any query by
// a share in 0..1, and isQuestion never panics on it.
func FuzzMemoryRestates(f *testing.F) {
	for _, s := range []string{"I remember: Which shelf?", "a?b.c!\n?", "Name: ", "¿Dónde está?", "\xff?", ""} {
		f.Add(s, "which shelf")
	}
	f.Fuzz(func(t *testing.T, content, query string) {
		for _, role := range []models.Role{"", models.RoleAssistant} {
			r := memoryRestates(&models.Memory{Content: content, Source: models.Source{Role: role}}, nlp.Terms(query))
			if !(r >= 0 && r <= 1) {
				t.Fatalf("memoryRestates(%q, %q, %q) = %v", content, query, role, r)
			}
		}
	})
}
