-- Experiment tallies are decided in Go (models/tally.go), once for both stores: the write
-- paths add the counts it returns (experiment_tally.go), so the triggers of 0007 and 0015
-- go, and with them the index the report scanned asOf's day with. Each count now also
-- records the day it became known (a turn and a surfacing on their own day, an outcome on
-- the day it was decided), so a report as of a past day counts what was known by then;
-- conversations are counted here too, on the day of their first turn.
DROP TRIGGER IF EXISTS experiment_turn;
DROP TRIGGER IF EXISTS experiment_surfaced;
DROP TRIGGER IF EXISTS experiment_outcome;
DROP TRIGGER IF EXISTS experiment_empty_turn;
DROP INDEX IF EXISTS decisions_experiment;
DROP INDEX IF EXISTS experiment_conversations_first;

CREATE TABLE experiment_counts (
    ns            TEXT    NOT NULL,
    experiment_id TEXT    NOT NULL,
    variant       TEXT    NOT NULL,
    day           INTEGER NOT NULL, -- unix day of the turns and surfacings counted
    known         INTEGER NOT NULL, -- unix day the counts became known (≥ day)
    turns         INTEGER NOT NULL DEFAULT 0,
    empty_turns   INTEGER NOT NULL DEFAULT 0,
    conversations INTEGER NOT NULL DEFAULT 0, -- conversations whose first turn was that day
    surfaced      INTEGER NOT NULL DEFAULT 0,
    used          INTEGER NOT NULL DEFAULT 0,
    helpful       INTEGER NOT NULL DEFAULT 0,
    ignored       INTEGER NOT NULL DEFAULT 0,
    dismissed     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (ns, experiment_id, variant, day, known)
) WITHOUT ROWID;

-- The counts kept so far: turns and surfacings, known on their own day.
INSERT INTO experiment_counts (ns, experiment_id, variant, day, known, turns, empty_turns, surfaced)
SELECT ns, experiment_id, variant, day, day, turns, empty_turns, surfaced FROM experiment_days WHERE true;
-- Conversations, on the day of their first turn (experiment_conversations stays: it is
-- what the next turn of a conversation is compared with).
INSERT INTO experiment_counts (ns, experiment_id, variant, day, known, conversations)
SELECT ns, experiment_id, variant, first_at / 86400000000000, first_at / 86400000000000, COUNT(*)
FROM experiment_conversations WHERE true GROUP BY ns, experiment_id, variant, first_at / 86400000000000
ON CONFLICT (ns, experiment_id, variant, day, known) DO UPDATE SET conversations = excluded.conversations;
-- Outcomes: experiment_days kept them under the surfacing's day only, so they are counted
-- again from the surfacings (never pruned while in an experiment), each known on the day
-- it was decided as models.Tallies.Surfacing says: an implicit ignore (outcome_at unset,
-- the smallest integer) and an outcome stamped before its surfacing on the surfacing's day.
INSERT INTO experiment_counts (ns, experiment_id, variant, day, known, used, helpful, ignored, dismissed)
SELECT ns, experiment_id, variant, day, known,
    SUM(outcome = 'used'), SUM(outcome = 'helpful'), SUM(outcome = 'ignored'), SUM(outcome = 'dismissed')
FROM (SELECT ns, experiment_id, variant, outcome, at / 86400000000000 AS day,
        max(at / 86400000000000, outcome_at / 86400000000000) AS known
    FROM surfacings
    WHERE experiment_id != '' AND mode IN ('ambient', 'resurface') AND outcome IN ('used', 'helpful', 'ignored', 'dismissed'))
WHERE true GROUP BY ns, experiment_id, variant, day, known
ON CONFLICT (ns, experiment_id, variant, day, known) DO UPDATE SET
    used = excluded.used, helpful = excluded.helpful, ignored = excluded.ignored, dismissed = excluded.dismissed;
DROP TABLE experiment_days;
