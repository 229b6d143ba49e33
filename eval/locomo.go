// Package eval measures retrieval quality on LoCoMo-format conversations (docs/design.md#quality-bars):
// it ingests each conversation's turns through the real ingest path and asks each question
// through the real recall pipeline, scoring evidence recall@k.
package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Conversation is one LoCoMo conversation file.
type Conversation struct {
	Name     string // file name without extension
	SpeakerA string
	SpeakerB string
	Sessions []Session
	QA       []QA
}

// Session is one dated session of turns.
type Session struct {
	N     int
	At    time.Time
	Turns []Turn
}

// Turn is one message.
type Turn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	Caption string `json:"blip_caption"`
}

// QA is one question with the ids of the turns that hold its answer.
type QA struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

// Content is what a turn is stored as: the speaker-prefixed text, plus the caption of a
// shared image (the only trace of the image a text-only bot has).
func (t Turn) Content() string {
	s := t.Speaker + ": " + t.Text
	if t.Caption != "" {
		s += " [shared an image: " + t.Caption + "]"
	}
	return s
}

// Last returns the time of the conversation's last session: the eval's clock stands there,
// as a bot's would when it is asked about the past.
func (c *Conversation) Last() time.Time {
	var t time.Time
	for _, s := range c.Sessions {
		if s.At.After(t) {
			t = s.At
		}
	}
	return t
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// LoadDir reads every *.json conversation of a directory, sorted by name.
func LoadDir(dir string) ([]*Conversation, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no *.json conversations in %s", dir)
	}
	sort.Strings(paths)
	var out []*Conversation
	for _, p := range paths {
		c, err := LoadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// LoadFile reads one LoCoMo conversation.
func LoadFile(path string) (*Conversation, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return c, nil
}

// Parse decodes one LoCoMo conversation document.
func Parse(raw []byte) (*Conversation, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	c := &Conversation{}
	if err := json.Unmarshal(doc["speaker_a"], &c.SpeakerA); err != nil {
		return nil, fmt.Errorf("speaker_a: %w", err)
	}
	_ = json.Unmarshal(doc["speaker_b"], &c.SpeakerB)
	if q, ok := doc["qa"]; ok {
		if err := json.Unmarshal(q, &c.QA); err != nil {
			return nil, fmt.Errorf("qa: %w", err)
		}
	}
	for k, v := range doc {
		m := sessionKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		s := Session{N: n}
		if err := json.Unmarshal(v, &s.Turns); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		var when string
		if err := json.Unmarshal(doc[k+"_date_time"], &when); err != nil {
			return nil, fmt.Errorf("%s_date_time: %w", k, err)
		}
		at, err := ParseTime(when)
		if err != nil {
			return nil, fmt.Errorf("%s_date_time: %w", k, err)
		}
		s.At = at
		c.Sessions = append(c.Sessions, s)
	}
	if len(c.Sessions) == 0 {
		return nil, fmt.Errorf("no sessions")
	}
	sort.Slice(c.Sessions, func(i, j int) bool { return c.Sessions[i].N < c.Sessions[j].N })
	return c, nil
}

// ParseTime reads LoCoMo's session times, e.g. "1:56 pm on 8 May, 2023".
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 January 2006", "3:04 PM on 2 January, 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("unrecognized time %q", s)
}
