package server

import (
	"regexp"
	"testing"
	"unicode"

	"github.com/goccy/go-yaml"

	"github.com/salience-ai/salience/models"
)

// TestOpenAPIContentPatternIsBlank: the document's pattern for a memory's content matches a
// one-character string exactly when models.Blank does not refuse it, for every code point, so
// Schemathesis's valid and invalid contents are the server's.
func TestOpenAPIContentPatternIsBlank(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Pattern string `yaml:"pattern"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(doc.Components.Schemas["Content"].Pattern)
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue // surrogates are not characters of a Go string
		}
		s := string(r)
		if re.MatchString(s) == models.Blank(s) {
			t.Errorf("U+%04X: the pattern matches %v, models.Blank says %v", r, re.MatchString(s), models.Blank(s))
		}
	}
}
