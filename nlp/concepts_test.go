package nlp

import (
	"reflect"
	"testing"

	"github.com/salience-ai/salience/models"
)

func TestEntities(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"Hey Mel! Good to see you! How have you been?", []string{"Mel"}},
		{"I went to a LGBTQ support group yesterday and it was so powerful.", []string{"LGBTQ"}},
		{"Wow, that's cool, Caroline! What happened?", []string{"Caroline"}},
		{"We moved to New York last year. New York is loud.", []string{"New York"}},
		{"Caroline's adoption went well, Mel said.", []string{"Caroline", "Mel"}},
		{"Caroline and Melanie met Caroline in Paris", []string{"Caroline", "Melanie", "Paris"}},
		// A sentence-initial name still counts; punctuation splits spans.
		{"Nadia keeps bees. Nadia, Jon, and Tim visited.", []string{"Nadia", "Jon", "Tim"}},
		// Openers, stop words, contractions, month and weekday names are not entities.
		{"Thanks, Melanie! The colors blend. I think You'd like It'll.", []string{"Melanie"}},
		{"Honestly, it is fun. Painting too. Started on Monday in May.", nil},
		// A word the text also writes in lower case is not a name at a sentence start.
		{"Painting helps. I love painting.", nil},
		{"Only numbers like 2023 and 42 are skipped, as is A.", nil},
		{"Yo Tim, Woohoo Melanie", []string{"Tim", "Melanie"}},
		{"", nil},
	} {
		if got := Entities(tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Entities(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestKeywords(t *testing.T) {
	for _, tc := range []struct {
		text  string
		limit int
		want  []string
	}{
		{"Nadia keeps her bees on the roof of the old cannery.", 0, []string{"nadia", "keeps", "bees", "roof", "cannery"}},
		// Frequency first, then first occurrence; one stem is one keyword, named by its
		// shortest form.
		{"The roof. Bees, bee, bee! The roof of 2023 at 3rd street.", 0, []string{"bee", "roof", "street"}},
		{"painting paintings painted", 0, []string{"painting"}},
		{"bees bee bees roof", 0, []string{"bees", "roof"}},
		{"alpha beta gamma delta", 2, []string{"alpha", "beta"}},
		{"Wow lol thanks, that is so cool", 0, nil},
		{"", 3, nil},
	} {
		got := Keywords(tc.text, tc.limit)
		if len(got) == 0 && len(tc.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Keywords(%q, %d) = %q, want %q", tc.text, tc.limit, got, tc.want)
		}
	}
}

func TestExtractConcepts(t *testing.T) {
	known := func(names ...string) func(string) bool {
		set := setOf(names...)
		return func(p string) bool { return in(set, p) }
	}
	for _, tc := range []struct {
		name  string
		text  string
		known func(string) bool
		limit int
		want  []Mention
	}{
		{
			name: "entities then keywords",
			text: "Hey Caroline! I went to the LGBTQ support group yesterday.",
			want: []Mention{
				{"caroline", KindEntity}, {"lgbtq", KindEntity},
				{"support", KindTopic}, {"group", KindTopic},
			},
		},
		{
			name:  "known phrases, longest first, and their words are not repeated as keywords",
			text:  "my support group meets near the pottery studio; pottery is calming",
			known: known("support group", "support", "pottery studio", "calming"),
			want: []Mention{
				{"support group", KindTopic}, {"pottery studio", KindTopic}, {"calming", KindTopic},
				{"meets", KindTopic}, {"near", KindTopic},
			},
		},
		{
			name:  "no phrase across punctuation",
			text:  "we drove to new york; york, new",
			known: known("new york", "york new"),
			want:  []Mention{{"new york", KindTopic}, {"drove", KindTopic}},
		},
		{
			name:  "limit keeps entities first",
			text:  "Jon met Gina and Maria about dance studios and dance shoes",
			limit: 3,
			want:  []Mention{{"jon", KindEntity}, {"gina", KindEntity}, {"maria", KindEntity}},
		},
		{
			name: "entity names are normalized",
			text: "I read the Lord  of the Rings and Spider-Man comics",
			want: []Mention{
				{"lord", KindEntity}, {"rings", KindEntity}, {"spider-man", KindEntity},
				{"read", KindTopic}, {"comics", KindTopic},
			},
		},
		{name: "empty", text: "", want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ExtractConcepts(tc.text, tc.known, tc.limit)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ExtractConcepts(%q) =\n %v\nwant\n %v", tc.text, got, tc.want)
			}
		})
	}
}

func TestExtractConceptsAsksKnownAboutNormalizedPhrases(t *testing.T) {
	var asked []string
	ExtractConcepts("the  old, cannery", func(p string) bool {
		asked = append(asked, p)
		return false
	}, 0)
	// "the" alone is a stop word and never asked; "old, cannery" crosses a comma.
	want := []string{"the old", "old", "cannery"}
	if !reflect.DeepEqual(asked, want) {
		t.Errorf("known was asked %q, want %q", asked, want)
	}
}

func TestEstimateTokens(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {"héllo wörld!", 3},
	} {
		if got := EstimateTokens(tc.text); got != tc.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestInferConversationType(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string
	}{
		{"I get a nil pointer panic and a stack trace when the server starts", models.ConvDebugging},
		{"Please fix this error, the build crashed", models.ConvDebugging},
		{"How do I set up a cron job? Can you help me?", models.ConvHelpSeeking},
		{"I need some advice on which laptop to buy", models.ConvHelpSeeking},
		{"What if we tried a graph database instead? Just curious.", models.ConvExploration},
		{"I wonder whether bees dream; I have an idea to explore", models.ConvExploration},
		{"Hey! How are you? Had a great weekend lol", models.ConvCasual},
		{"I felt so happy with my family at the party", models.ConvCasual},
		{"The meeting is at noon in room 4.", models.ConvOther},
		{"", models.ConvOther},
	} {
		if got := InferConversationType(tc.text); got != tc.want {
			t.Errorf("InferConversationType(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestNormalizeName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"caroline", "caroline"},
		{"New  York", "new york"},
		{" spider-man ", "spider-man"},
		{"rock'n'roll & more", "rock'n'roll & more"},
		{"O’Neil", "o neil"},
		{"São Paulo!", "são paulo"},
		{"a  b", "a b"},
		{"", ""},
		{"...", ""},
	} {
		if got := models.NormalizeConcept(tc.in); got != tc.want {
			t.Errorf("models.NormalizeConcept(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
