package nlp

import (
	"strconv"
	"strings"
	"time"
)

// TimeRange is a time phrase of a text and the interval it names, [Start, End) in the
// location of the now it was resolved against.
type TimeRange struct {
	Phrase     string // as written
	Start, End time.Time
}

// Temporal finds time phrases in text and resolves them against now. Recognized, case
// insensitively:
//
//	today, yesterday, tomorrow, tonight (18:00–24:00), last night (18:00–06:00),
//	this morning / afternoon / evening,
//	this|last|next week|month|year|weekend|<weekday>|<month>,
//	N days|weeks|months|years ago (N in digits, one–twelve, a/an),
//	on <weekday>, <weekday> (the most recent one, today included),
//	in|during <month> (the most recent one not after now), <month> <year>,
//	<day> [of] <month> [<year>], <month> <day>[,] [<year>] (without a year: the most recent
//	such date not after today), in|during <year>, recently|lately (the last 30 days).
//
// Weeks start on Monday (ISO 8601); "N weeks ago" is the calendar week holding the day
// N×7 days back, "N months ago" the calendar month, "N years ago" the calendar year. "may"
// and abbreviated month names count only beside a number or after in/during/this/last/next,
// so "I may go" is not May. Phrases come in text order; a later phrase naming the same
// interval as an earlier one is dropped.
func Temporal(text string, now time.Time) []TimeRange {
	p := temporalParser{words: scanWords(text), text: text, now: now}
	if len(p.words) == 0 {
		return nil
	}
	p.lower = make([]string, len(p.words))
	for i, w := range p.words {
		p.lower[i] = strings.ToLower(strings.ReplaceAll(w.text, "’", "'"))
	}
	p.today = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())

	var out []TimeRange
	type key struct{ s, e int64 }
	seen := map[key]struct{}{}
	for i := 0; i < len(p.words); {
		start, end, n := p.match(i)
		if n == 0 {
			i++
			continue
		}
		k := key{start.UnixNano(), end.UnixNano()}
		if _, dup := seen[k]; !dup && start.Before(end) {
			seen[k] = struct{}{}
			out = append(out, TimeRange{
				Phrase: text[p.words[i].start:p.words[i+n-1].end],
				Start:  start,
				End:    end,
			})
		}
		i += n
	}
	return out
}

type temporalParser struct {
	text  string
	words []word
	lower []string
	now   time.Time
	today time.Time // midnight of now's day
}

// at returns the lower-case word at i, or "" past the end.
func (p *temporalParser) at(i int) string {
	if i >= len(p.lower) {
		return ""
	}
	return p.lower[i]
}

// linked reports whether word i continues the phrase: only spaces or one comma before it.
func (p *temporalParser) linked(i int) bool {
	if i >= len(p.words) {
		return false
	}
	sep := strings.TrimSpace(p.words[i].sep)
	if strings.ContainsAny(p.words[i].sep, "\n\r") {
		return false
	}
	return sep == "" || sep == ","
}

// next returns the word at i when it is linked to the phrase, else "": a phrase does not
// run across sentences or lines.
func (p *temporalParser) next(i int) string {
	if !p.linked(i) {
		return ""
	}
	return p.at(i)
}

func (p *temporalParser) day(offset int) time.Time { return p.today.AddDate(0, 0, offset) }

// monday returns midnight of the Monday of the week holding t.
func monday(t time.Time) time.Time {
	back := (int(t.Weekday()) + 6) % 7
	return time.Date(t.Year(), t.Month(), t.Day()-back, 0, 0, 0, 0, t.Location())
}

func (p *temporalParser) monthStart(year int, month time.Month) time.Time {
	return time.Date(year, month, 1, 0, 0, 0, 0, p.now.Location())
}

func (p *temporalParser) at0(year int, month time.Month, day, hour int) time.Time {
	return time.Date(year, month, day, hour, 0, 0, 0, p.now.Location())
}

// match tries every pattern at word i and returns the interval and the number of words
// used, or n == 0.
func (p *temporalParser) match(i int) (start, end time.Time, n int) {
	w := p.at(i)
	y, m, d := p.today.Date()
	switch w {
	case "today":
		return p.day(0), p.day(1), 1
	case "yesterday":
		return p.day(-1), p.day(0), 1
	case "tomorrow":
		return p.day(1), p.day(2), 1
	case "tonight":
		return p.at0(y, m, d, 18), p.day(1), 1
	case "recently", "lately":
		return p.day(-30), p.day(1), 1
	case "this", "last", "next":
		if s, e, k := p.relative(w, i+1); k > 0 {
			return s, e, 1 + k
		}
	case "on":
		if wd, ok := weekdays[p.next(i+1)]; ok {
			s, e := p.weekdayOnOrBefore(wd)
			return s, e, 2
		}
		if s, e, k := p.date(i + 1); k > 0 {
			return s, e, 1 + k
		}
	case "in", "during":
		if mo, ok := months[p.next(i+1)]; ok {
			if s, e, k := p.date(i + 1); k > 0 {
				return s, e, 1 + k
			}
			s := p.monthStart(y, time.Month(mo))
			if mo > int(m) {
				s = s.AddDate(-1, 0, 0)
			}
			return s, s.AddDate(0, 1, 0), 2
		}
		if yr, ok := year(p.next(i + 1)); ok {
			s := p.monthStart(yr, time.January)
			return s, s.AddDate(1, 0, 0), 2
		}
	}
	if wd, ok := weekdays[w]; ok && len(w) > 3 {
		s, e := p.weekdayOnOrBefore(wd)
		return s, e, 1
	}
	if s, e, k := p.ago(i); k > 0 {
		return s, e, k
	}
	return p.date(i)
}

// relative handles the word after this/last/next, at i.
func (p *temporalParser) relative(which string, i int) (start, end time.Time, n int) {
	w := p.next(i)
	y, m, d := p.today.Date()
	step := map[string]int{"this": 0, "last": -1, "next": 1}[which]
	switch w {
	case "week":
		s := monday(p.today).AddDate(0, 0, 7*step)
		return s, s.AddDate(0, 0, 7), 1
	case "month":
		s := p.monthStart(y, m).AddDate(0, step, 0)
		return s, s.AddDate(0, 1, 0), 1
	case "year":
		s := p.monthStart(y+step, time.January)
		return s, s.AddDate(1, 0, 0), 1
	case "weekend":
		mon := monday(p.today)
		switch which {
		case "last": // the weekend before this week's Monday
			return mon.AddDate(0, 0, -2), mon, 1
		case "this": // Saturday and Sunday of this week
			return mon.AddDate(0, 0, 5), mon.AddDate(0, 0, 7), 1
		default: // the first weekend that has not started yet
			s := mon.AddDate(0, 0, 5)
			if !p.today.Before(s) {
				s = s.AddDate(0, 0, 7)
			}
			return s, s.AddDate(0, 0, 2), 1
		}
	case "night":
		if which == "last" {
			return p.at0(y, m, d-1, 18), p.at0(y, m, d, 6), 1
		}
		if which == "this" {
			return p.at0(y, m, d, 18), p.day(1), 1
		}
	case "morning":
		if which == "this" {
			return p.day(0), p.at0(y, m, d, 12), 1
		}
	case "afternoon":
		if which == "this" {
			return p.at0(y, m, d, 12), p.at0(y, m, d, 18), 1
		}
	case "evening":
		if which == "this" {
			return p.at0(y, m, d, 18), p.day(1), 1
		}
	}
	if wd, ok := weekdays[w]; ok {
		today := int(p.today.Weekday())
		var off int
		switch which {
		case "last": // strictly before today
			off = -((today - wd + 7) % 7)
			if off == 0 {
				off = -7
			}
		case "next": // strictly after today
			off = (wd - today + 7) % 7
			if off == 0 {
				off = 7
			}
		default: // the day of this Monday-based week
			off = (wd+6)%7 - (today+6)%7
		}
		return p.day(off), p.day(off + 1), 1
	}
	if mo, ok := months[w]; ok {
		s := p.monthStart(y, time.Month(mo))
		switch which {
		case "last": // strictly before this month
			if mo >= int(m) {
				s = s.AddDate(-1, 0, 0)
			}
		case "next": // strictly after this month
			if mo <= int(m) {
				s = s.AddDate(1, 0, 0)
			}
		}
		return s, s.AddDate(0, 1, 0), 1
	}
	return time.Time{}, time.Time{}, 0
}

// weekdayOnOrBefore returns the most recent day (today included) that is weekday wd.
func (p *temporalParser) weekdayOnOrBefore(wd int) (start, end time.Time) {
	off := (int(p.today.Weekday()) - wd + 7) % 7
	return p.day(-off), p.day(-off + 1)
}

// ago handles "N units ago" at i.
func (p *temporalParser) ago(i int) (start, end time.Time, n int) {
	num, ok := count(p.at(i))
	if !ok || p.next(i+2) != "ago" {
		return time.Time{}, time.Time{}, 0
	}
	y, m, _ := p.today.Date()
	switch strings.TrimSuffix(p.next(i+1), "s") {
	case "day":
		return p.day(-num), p.day(-num + 1), 3
	case "week":
		s := monday(p.today.AddDate(0, 0, -7*num))
		return s, s.AddDate(0, 0, 7), 3
	case "month":
		s := p.monthStart(y, m).AddDate(0, -num, 0)
		return s, s.AddDate(0, 1, 0), 3
	case "year":
		s := p.monthStart(y-num, time.January)
		return s, s.AddDate(1, 0, 0), 3
	}
	return time.Time{}, time.Time{}, 0
}

// date handles calendar dates at i: "8 May 2023", "8th of May", "May 8, 2023", "May 2023",
// "May 8". A date without a year is the most recent one not after today.
func (p *temporalParser) date(i int) (start, end time.Time, n int) {
	var zero time.Time
	w := p.at(i)
	if dd, ok := dayOfMonth(w); ok {
		j := i + 1
		if p.next(j) == "of" {
			j++
		}
		mo, ok := months[p.next(j)]
		if !ok {
			return zero, zero, 0
		}
		if yr, ok := year(p.next(j + 1)); ok {
			return p.dayRange(yr, mo, dd, j+2-i)
		}
		return p.recentDay(mo, dd, j+1-i)
	}
	mo, ok := months[w]
	if !ok {
		return zero, zero, 0
	}
	if dd, ok := dayOfMonth(p.next(i + 1)); ok {
		if yr, ok := year(p.next(i + 2)); ok {
			return p.dayRange(yr, mo, dd, 3)
		}
		return p.recentDay(mo, dd, 2)
	}
	if yr, ok := year(p.next(i + 1)); ok {
		s := p.monthStart(yr, time.Month(mo))
		return s, s.AddDate(0, 1, 0), 2
	}
	return zero, zero, 0
}

// dayRange returns the day yr-mo-dd as an n-word match, or no match when it does not exist.
func (p *temporalParser) dayRange(yr, mo, dd, n int) (start, end time.Time, k int) {
	s := p.at0(yr, time.Month(mo), dd, 0)
	if s.Day() != dd { // 31 April normalizes to 1 May: not a date
		return time.Time{}, time.Time{}, 0
	}
	return s, s.AddDate(0, 0, 1), n
}

// recentDay returns the most recent mo-dd not after today (looking back up to 8 years, so
// 29 February finds a leap year).
func (p *temporalParser) recentDay(mo, dd, n int) (start, end time.Time, k int) {
	for yr := p.today.Year(); yr >= p.today.Year()-8; yr-- {
		s, e, k := p.dayRange(yr, mo, dd, n)
		if k > 0 && !s.After(p.today) {
			return s, e, k
		}
	}
	return time.Time{}, time.Time{}, 0
}

// numberWords are the spelled-out counts "N … ago" accepts.
var numberWords = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}

// count parses a count for "N … ago": 1–999 in digits or a number word.
func count(w string) (int, bool) {
	if n, ok := numberWords[w]; ok {
		return n, true
	}
	if len(w) == 0 || len(w) > 3 {
		return 0, false
	}
	n, err := strconv.Atoi(w)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// dayOfMonth parses "8", "08" or "8th" as a day of the month, 1–31.
func dayOfMonth(w string) (int, bool) {
	if !isNumber(w) || len(w) > 4 {
		return 0, false
	}
	w = strings.TrimRight(w, "stndrh")
	if len(w) > 2 {
		return 0, false
	}
	n, err := strconv.Atoi(w)
	if err != nil || n < 1 || n > 31 {
		return 0, false
	}
	return n, true
}

// year parses a four-digit year from 1900 to 2199.
func year(w string) (int, bool) {
	if len(w) != 4 {
		return 0, false
	}
	n, err := strconv.Atoi(w)
	if err != nil || n < 1900 || n > 2199 {
		return 0, false
	}
	return n, true
}
