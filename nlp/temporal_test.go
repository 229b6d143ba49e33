package nlp

import (
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // America/New_York for the DST case, whatever the host has
)

// zone is a fixed UTC−4 location, so the test does not depend on the host's time zone.
var zone = time.FixedZone("EDT", -4*3600)

// wednesday is the fixed now of most cases: Wednesday 10 May 2023, 15:04 in zone.
var wednesday = time.Date(2023, 5, 10, 15, 4, 0, 0, zone)

// d is a date at midnight in zone; dh at an hour.
func d(y, m, day int) time.Time { return time.Date(y, time.Month(m), day, 0, 0, 0, 0, zone) }
func dh(y, m, day, h int) time.Time {
	return time.Date(y, time.Month(m), day, h, 0, 0, 0, zone)
}

func fmtRanges(rs []TimeRange) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%q [%s, %s)", r.Phrase, r.Start.Format("2006-01-02 15:04 MST"), r.End.Format("2006-01-02 15:04 MST")))
	}
	return strings.Join(parts, "; ")
}

func TestTemporal(t *testing.T) {
	saturday := time.Date(2023, 5, 13, 9, 0, 0, 0, zone)
	for _, tc := range []struct {
		text string
		now  time.Time
		want []TimeRange
	}{
		{"today", wednesday, []TimeRange{{"today", d(2023, 5, 10), d(2023, 5, 11)}}},
		{"What did we do Yesterday?", wednesday, []TimeRange{{"Yesterday", d(2023, 5, 9), d(2023, 5, 10)}}},
		{"see you tomorrow", wednesday, []TimeRange{{"tomorrow", d(2023, 5, 11), d(2023, 5, 12)}}},
		{"tonight", wednesday, []TimeRange{{"tonight", dh(2023, 5, 10, 18), d(2023, 5, 11)}}},
		{"last night was fun", wednesday, []TimeRange{{"last night", dh(2023, 5, 9, 18), dh(2023, 5, 10, 6)}}},
		{"this morning", wednesday, []TimeRange{{"this morning", d(2023, 5, 10), dh(2023, 5, 10, 12)}}},
		{"this week", wednesday, []TimeRange{{"this week", d(2023, 5, 8), d(2023, 5, 15)}}},
		{"LAST WEEK", wednesday, []TimeRange{{"LAST WEEK", d(2023, 5, 1), d(2023, 5, 8)}}},
		{"next week", wednesday, []TimeRange{{"next week", d(2023, 5, 15), d(2023, 5, 22)}}},
		{"this month", wednesday, []TimeRange{{"this month", d(2023, 5, 1), d(2023, 6, 1)}}},
		{"last month", wednesday, []TimeRange{{"last month", d(2023, 4, 1), d(2023, 5, 1)}}},
		{"next month", wednesday, []TimeRange{{"next month", d(2023, 6, 1), d(2023, 7, 1)}}},
		{"this year", wednesday, []TimeRange{{"this year", d(2023, 1, 1), d(2024, 1, 1)}}},
		{"last year", wednesday, []TimeRange{{"last year", d(2022, 1, 1), d(2023, 1, 1)}}},
		{"next year", wednesday, []TimeRange{{"next year", d(2024, 1, 1), d(2025, 1, 1)}}},
		{"3 days ago", wednesday, []TimeRange{{"3 days ago", d(2023, 5, 7), d(2023, 5, 8)}}},
		{"a day ago", wednesday, []TimeRange{{"a day ago", d(2023, 5, 9), d(2023, 5, 10)}}},
		// 14 days back is Wednesday 26 April; its week starts Monday 24 April.
		{"two weeks ago", wednesday, []TimeRange{{"two weeks ago", d(2023, 4, 24), d(2023, 5, 1)}}},
		{"a month ago", wednesday, []TimeRange{{"a month ago", d(2023, 4, 1), d(2023, 5, 1)}}},
		{"twelve months ago", wednesday, []TimeRange{{"twelve months ago", d(2022, 5, 1), d(2022, 6, 1)}}},
		{"5 years ago", wednesday, []TimeRange{{"5 years ago", d(2018, 1, 1), d(2019, 1, 1)}}},
		{"last Monday", wednesday, []TimeRange{{"last Monday", d(2023, 5, 8), d(2023, 5, 9)}}},
		{"last Wednesday", wednesday, []TimeRange{{"last Wednesday", d(2023, 5, 3), d(2023, 5, 4)}}},
		{"next Friday", wednesday, []TimeRange{{"next Friday", d(2023, 5, 12), d(2023, 5, 13)}}},
		{"this Monday", wednesday, []TimeRange{{"this Monday", d(2023, 5, 8), d(2023, 5, 9)}}},
		{"on Friday", wednesday, []TimeRange{{"on Friday", d(2023, 5, 5), d(2023, 5, 6)}}},
		{"on Wednesday", wednesday, []TimeRange{{"on Wednesday", d(2023, 5, 10), d(2023, 5, 11)}}},
		{"on sat", wednesday, []TimeRange{{"on sat", d(2023, 5, 6), d(2023, 5, 7)}}},
		{"Saturday was long", wednesday, []TimeRange{{"Saturday", d(2023, 5, 6), d(2023, 5, 7)}}},
		{"in May", wednesday, []TimeRange{{"in May", d(2023, 5, 1), d(2023, 6, 1)}}},
		{"in June", wednesday, []TimeRange{{"in June", d(2022, 6, 1), d(2022, 7, 1)}}},
		{"during December", wednesday, []TimeRange{{"during December", d(2022, 12, 1), d(2023, 1, 1)}}},
		{"last May", wednesday, []TimeRange{{"last May", d(2022, 5, 1), d(2022, 6, 1)}}},
		{"in May 2021", wednesday, []TimeRange{{"in May 2021", d(2021, 5, 1), d(2021, 6, 1)}}},
		{"May 2023", wednesday, []TimeRange{{"May 2023", d(2023, 5, 1), d(2023, 6, 1)}}},
		{"on 8 May 2023", wednesday, []TimeRange{{"on 8 May 2023", d(2023, 5, 8), d(2023, 5, 9)}}},
		{"1:56 pm on 8 May, 2023", wednesday, []TimeRange{{"on 8 May, 2023", d(2023, 5, 8), d(2023, 5, 9)}}},
		{"May 8, 2023", wednesday, []TimeRange{{"May 8, 2023", d(2023, 5, 8), d(2023, 5, 9)}}},
		{"8 May", wednesday, []TimeRange{{"8 May", d(2023, 5, 8), d(2023, 5, 9)}}},
		{"May 20", wednesday, []TimeRange{{"May 20", d(2022, 5, 20), d(2022, 5, 21)}}},
		{"the 8th of June", wednesday, []TimeRange{{"8th of June", d(2022, 6, 8), d(2022, 6, 9)}}},
		{"Feb 29", wednesday, []TimeRange{{"Feb 29", d(2020, 2, 29), d(2020, 3, 1)}}},
		{"31 April 2023", wednesday, []TimeRange{{"April 2023", d(2023, 4, 1), d(2023, 5, 1)}}},
		{"in 2022", wednesday, []TimeRange{{"in 2022", d(2022, 1, 1), d(2023, 1, 1)}}},
		{"last weekend", wednesday, []TimeRange{{"last weekend", d(2023, 5, 6), d(2023, 5, 8)}}},
		{"this weekend", wednesday, []TimeRange{{"this weekend", d(2023, 5, 13), d(2023, 5, 15)}}},
		{"next weekend", wednesday, []TimeRange{{"next weekend", d(2023, 5, 13), d(2023, 5, 15)}}},
		{"last weekend", saturday, []TimeRange{{"last weekend", d(2023, 5, 6), d(2023, 5, 8)}}},
		{"next weekend", saturday, []TimeRange{{"next weekend", d(2023, 5, 20), d(2023, 5, 22)}}},
		{"recently", wednesday, []TimeRange{{"recently", d(2023, 4, 10), d(2023, 5, 11)}}},
		{"Yesterday I saw Mel, and last week we met in Paris.", wednesday, []TimeRange{
			{"Yesterday", d(2023, 5, 9), d(2023, 5, 10)},
			{"last week", d(2023, 5, 1), d(2023, 5, 8)},
		}},
		{"today and today again", wednesday, []TimeRange{{"today", d(2023, 5, 10), d(2023, 5, 11)}}},
		// Not time phrases.
		{"I may go. May I help?", wednesday, nil},
		{"It was the last. Week one begins", wednesday, nil},
		{"in 1850 or in 12345", wednesday, nil},
		{"days ago", wednesday, nil},
		{"", wednesday, nil},
	} {
		got := Temporal(tc.text, tc.now)
		if fmtRanges(got) != fmtRanges(tc.want) {
			t.Errorf("Temporal(%q)\n got %s\nwant %s", tc.text, fmtRanges(got), fmtRanges(tc.want))
		}
	}
}

func TestTemporalDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// Clocks went forward on 12 March 2023 in New York: that day had 23 hours.
	now := time.Date(2023, 3, 13, 10, 0, 0, 0, ny)
	got := Temporal("yesterday", now)
	if len(got) != 1 {
		t.Fatalf("got %d ranges, want 1", len(got))
	}
	wantStart := time.Date(2023, 3, 12, 0, 0, 0, 0, ny)
	wantEnd := time.Date(2023, 3, 13, 0, 0, 0, 0, ny)
	if !got[0].Start.Equal(wantStart) || !got[0].End.Equal(wantEnd) {
		t.Errorf("yesterday = [%v, %v), want [%v, %v)", got[0].Start, got[0].End, wantStart, wantEnd)
	}
	if h := got[0].End.Sub(got[0].Start); h != 23*time.Hour {
		t.Errorf("yesterday lasted %v, want 23h", h)
	}
	if got[0].Start.Location() != ny {
		t.Errorf("location %v, want %v", got[0].Start.Location(), ny)
	}
}
