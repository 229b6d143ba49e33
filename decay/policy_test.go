package decay

import (
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

func days2d(d float64) time.Duration { return time.Duration(d * float64(Day)) }

func TestGradeFor(t *testing.T) {
	for ev, want := range map[models.EventType]Grade{
		models.EventHelpful:   Easy,
		models.EventUsed:      Good,
		models.EventIgnored:   Hard,
		models.EventDismissed: Again,
		"shrugged":            0,
	} {
		if got := GradeFor(ev); got != want {
			t.Errorf("GradeFor(%q) = %d, want %d", ev, got, want)
		}
	}
}

func TestPolicyByName(t *testing.T) {
	for _, c := range []struct {
		name, want string
		code       string
	}{
		{"linear", "linear", ""},
		{"fsrs", "fsrs", ""},
		{"", DefaultPolicy, ""},
		{"sm2", "", models.EINVALID},
	} {
		p, err := PolicyByName(c.name)
		if got := models.ErrorCode(err); got != c.code {
			t.Errorf("PolicyByName(%q) error code = %q, want %q", c.name, got, c.code)
			continue
		}
		if err == nil && p.Name() != c.want {
			t.Errorf("PolicyByName(%q).Name() = %q, want %q", c.name, p.Name(), c.want)
		}
	}
	p, err := PolicyByName("linear", Params{Threshold: 1.5, Cooldown: Day})
	if err != nil {
		t.Fatal(err)
	}
	if l := p.(*LinearPolicy); l.Threshold != 1.5 || l.Cooldown != Day {
		t.Errorf("linear params = %+v, want threshold 1.5, cooldown 24h", l)
	}
	w := DefaultWeights
	w[20] = 0.5
	p, err = PolicyByName("fsrs", Params{TargetRetention: 0.8, Weights: &w, Cooldown: -1, MaxInterval: 30 * Day})
	if err != nil {
		t.Fatal(err)
	}
	if f := p.(*FSRS); f.TargetRetention != 0.8 || f.W[20] != 0.5 || f.cooldown() != 0 || f.MaxInterval != 30*Day {
		t.Errorf("fsrs params = %+v", f)
	}
	if _, err := PolicyByName("fsrs", Params{TargetRetention: 1.2}); models.ErrorField(err) != "target_retention" {
		t.Errorf("target retention 1.2: error %v, want one naming target_retention", err)
	}
	if _, err := PolicyByName("fsrs", Params{}, Params{}); models.ErrorCode(err) != models.EINVALID {
		t.Errorf("two Params: error %v, want EINVALID", err)
	}
}

// event is one engagement applied to a memory; the counters move as package engagement
// would move them, so the linear policy sees what it sees in production.
type event struct {
	after time.Duration // since the memory's creation
	ev    models.EventType
}

func apply(p Policy, m *models.Memory, evs []event) {
	for _, e := range evs {
		at := m.CreatedAt.Add(e.after)
		if e.ev.Positive() {
			m.UsageCount++
			m.LastUsed = at
		}
		p.OnEvent(m, e.ev, at)
	}
}

func TestLinearDue(t *testing.T) {
	for _, c := range []struct {
		name    string
		events  []event
		wantDue time.Duration // since creation
	}{
		{"never used: 0.7 days after creation", nil, days2d(0.7)},
		{"used once at day 2: 2 + 0.7·2", []event{{2 * Day, models.EventUsed}}, days2d(3.4)},
		{"used twice: 5 + 0.7·3", []event{{2 * Day, models.EventUsed}, {5 * Day, models.EventHelpful}}, days2d(7.1)},
		{"ignored changes nothing", []event{{2 * Day, models.EventIgnored}}, days2d(0.7)},
		{"dismissed at day 1: cooldown to day 8", []event{{Day, models.EventDismissed}}, 8 * Day},
		{"used after the cooldown started: still day 8", []event{{Day, models.EventDismissed}, {2 * Day, models.EventUsed}}, 8 * Day},
		{"used long after the cooldown", []event{{Day, models.EventDismissed}, {20 * Day, models.EventUsed}}, days2d(21.4)},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Linear(0)
			m := &models.Memory{CreatedAt: t0}
			apply(p, m, c.events)
			want := t0.Add(c.wantDue)
			if got := p.NextDue(m); !got.Equal(want) {
				t.Errorf("NextDue = %v, want %v", got, want)
			}
			if len(c.events) > 0 && !m.Schedule.Due.Equal(want) {
				t.Errorf("Schedule.Due = %v, want %v", m.Schedule.Due, want)
			}
			if due, _ := p.Due(m, want.Add(-time.Second)); due {
				t.Errorf("due a second before NextDue")
			}
			if due, _ := p.Due(m, want); !due {
				t.Errorf("not due at NextDue")
			}
		})
	}
}

func TestLinearScore(t *testing.T) {
	p := Linear(0.7)
	m := &models.Memory{CreatedAt: t0, UsageCount: 3, LastUsed: t0.Add(Day)}
	due, score := p.Due(m, t0.Add(3*Day)) // 2 days / 4
	if due || score != 0.5 {
		t.Errorf("Due = %v, %v; want false, 0.5", due, score)
	}
	due, score = p.Due(m, t0.Add(5*Day)) // 4 days / 4
	if !due || score != 1 {
		t.Errorf("Due = %v, %v; want true, 1", due, score)
	}
	if got, want := p.NextDue(m), t0.Add(Day+days2d(2.8)); !got.Equal(want) {
		t.Errorf("NextDue = %v, want %v", got, want)
	}
}

func TestFSRSDue(t *testing.T) {
	f := NewFSRS()
	// Expected due offsets since creation, from the formulas (see TestReviewVectors for the
	// numbers behind them).
	for _, c := range []struct {
		name    string
		events  []event
		wantDue float64 // days since creation
		tol     float64
	}{
		{"never reviewed: the prior curve of a Good review at creation", nil, 2.3065, 1e-6},
		{"used at day 3: the first review, S0(Good)", []event{{3 * Day, models.EventUsed}}, 3 + 2.3065, 1e-6},
		{"helpful at day 3: the first review, S0(Easy)", []event{{3 * Day, models.EventHelpful}}, 3 + 8.2956, 1e-6},
		{"used right after creation: S0(Good) from the use", []event{{time.Hour, models.EventUsed}}, 1.0/24 + 2.3065, 1e-6},
		{"dismissed at day 3: the cooldown, not the short lapse interval", []event{{3 * Day, models.EventDismissed}}, 10, 0},
		{"helpful after a dismissal: still not before the cooldown", []event{{3 * Day, models.EventDismissed}, {4 * Day, models.EventHelpful}}, 10, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &models.Memory{CreatedAt: t0}
			apply(f, m, c.events)
			got := days(f.NextDue(m).Sub(t0))
			near(t, "due (days)", got, c.wantDue, c.tol+1e-9)
			if len(c.events) > 0 && !m.Schedule.Due.Equal(f.NextDue(m)) {
				t.Errorf("Schedule.Due = %v, NextDue = %v; want equal", m.Schedule.Due, f.NextDue(m))
			}
			at := f.NextDue(m)
			if due, _ := f.Due(m, at.Add(-time.Second)); due {
				t.Errorf("due a second before NextDue")
			}
			if due, score := f.Due(m, at); !due || score < 0 {
				t.Errorf("at NextDue: due %v score %v; want due with score ≥ 0", due, score)
			}
		})
	}
}

func TestFSRSOnEventState(t *testing.T) {
	f := NewFSRS()
	m := &models.Memory{CreatedAt: t0}
	// The first event is the first review: being stored is not one (issue 45).
	f.OnEvent(m, models.EventUsed, t0.Add(3*Day))
	if s := m.Schedule; s.Reps != 1 || s.Lapses != 0 || !s.LastReview.Equal(t0.Add(3*Day)) {
		t.Errorf("after the first use: %+v; want Reps 1, Lapses 0, LastReview day 3", s)
	}
	near(t, "S0(Good)", m.Schedule.Stability, 2.306500, 5e-7)
	near(t, "D0(Good)", m.Schedule.Difficulty, 2.118104, 5e-7)
	// Then the reference vectors' rows 2 and 3: Good 3 days on, Again 10 days after that.
	f.OnEvent(m, models.EventUsed, t0.Add(6*Day))
	if s := m.Schedule; s.Reps != 2 || s.Lapses != 0 {
		t.Errorf("Reps, Lapses = %d, %d; want 2, 0", s.Reps, s.Lapses)
	}
	near(t, "S", m.Schedule.Stability, 13.826904, 5e-7)
	near(t, "D", m.Schedule.Difficulty, 2.111214, 5e-7)
	f.OnEvent(m, models.EventDismissed, t0.Add(16*Day))
	near(t, "S after dismissal", m.Schedule.Stability, 1.666141, 5e-7)
	if want := t0.Add(23 * Day); !m.Schedule.CooldownTo.Equal(want) {
		t.Errorf("CooldownTo = %v, want %v", m.Schedule.CooldownTo, want)
	}
	before := m.Schedule
	f.OnEvent(m, "shrugged", t0.Add(17*Day))
	if m.Schedule != before {
		t.Errorf("an unknown event changed the schedule: %+v", m.Schedule)
	}
}

func TestFSRSScoreOrders(t *testing.T) {
	f := NewFSRS()
	now := t0.Add(100 * Day)
	weak := &models.Memory{CreatedAt: t0, Schedule: models.Schedule{Reps: 2, Stability: 2, Difficulty: 5, LastReview: t0}}
	strong := &models.Memory{CreatedAt: t0, Schedule: models.Schedule{Reps: 2, Stability: 50, Difficulty: 5, LastReview: t0}}
	_, sw := f.Due(weak, now)
	_, ss := f.Due(strong, now)
	// 1 − R(100, 2) = 1 − (1 + F·100/2)^(−w20), F = 0.980346 (docs/formulas.md#fsrs-6), by hand.
	near(t, "score", sw, 0.452990, 1e-6)
	if !(sw > ss) {
		t.Errorf("weak memory score %v should exceed strong memory score %v", sw, ss)
	}
}
