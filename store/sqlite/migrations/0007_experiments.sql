-- A/B experiments (docs/design.md#experiments). The variants and their overrides are one JSON document: they
-- are read and written whole, never queried. A namespace runs at most one experiment at a
-- time, which the partial unique index enforces under concurrent creates.
CREATE TABLE experiments (
    ns          TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL,
    variants    TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    created_by  TEXT    NOT NULL DEFAULT '',
    stopped_at  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (ns, id)
);
CREATE UNIQUE INDEX experiments_running ON experiments (ns) WHERE status = 'running';
-- Each surfacing and each threshold decision records the experiment its variant belongs to;
-- a decision also records the turn's latency, so a report counts every turn, empty ones
-- included. The partial indexes cover the report's tally and cost nothing outside
-- experiments.
ALTER TABLE surfacings ADD COLUMN experiment_id TEXT NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN experiment_id TEXT NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN latency_ms REAL NOT NULL DEFAULT 0;
CREATE INDEX surfacings_experiment ON surfacings (ns, experiment_id, variant, at, mode, outcome, outcome_at) WHERE experiment_id != '';
CREATE INDEX decisions_experiment ON decisions (ns, experiment_id, variant, at, conversation_id, latency_ms) WHERE experiment_id != '';

-- A report over a million outcomes cannot scan them in time (3.2 s for the tally alone with
-- this driver), so each experiment keeps running counts, per variant and UTC day, that
-- triggers move as turns, surfacings and outcomes are written (counting only: which
-- outcome a surfacing has is decided by engagement, as before). A report adds up the days
-- before its as-of day from these, and scans only its own day. Latencies are counted in
-- buckets of 0.1 ms; conversations by their first turn.
CREATE TABLE experiment_days (
    ns            TEXT    NOT NULL,
    experiment_id TEXT    NOT NULL,
    variant       TEXT    NOT NULL,
    day           INTEGER NOT NULL, -- unix day: at / 86400e9
    turns         INTEGER NOT NULL DEFAULT 0,
    surfaced      INTEGER NOT NULL DEFAULT 0,
    used          INTEGER NOT NULL DEFAULT 0,
    helpful       INTEGER NOT NULL DEFAULT 0,
    ignored       INTEGER NOT NULL DEFAULT 0,
    dismissed     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (ns, experiment_id, variant, day)
) WITHOUT ROWID;
CREATE TABLE experiment_latencies (
    ns            TEXT    NOT NULL,
    experiment_id TEXT    NOT NULL,
    variant       TEXT    NOT NULL,
    day           INTEGER NOT NULL,
    tenths        INTEGER NOT NULL, -- latency in tenths of a millisecond
    n             INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (ns, experiment_id, variant, day, tenths)
) WITHOUT ROWID;
CREATE TABLE experiment_conversations (
    ns              TEXT    NOT NULL,
    experiment_id   TEXT    NOT NULL,
    conversation_id TEXT    NOT NULL,
    variant         TEXT    NOT NULL,
    first_at        INTEGER NOT NULL,
    PRIMARY KEY (ns, experiment_id, conversation_id)
) WITHOUT ROWID;
CREATE INDEX experiment_conversations_first ON experiment_conversations (ns, experiment_id, variant, first_at);

-- A decision is a turn (written once; a reward updates it without moving these).
CREATE TRIGGER experiment_turn AFTER INSERT ON decisions WHEN new.experiment_id != '' BEGIN
    INSERT INTO experiment_days (ns, experiment_id, variant, day, turns)
    VALUES (new.ns, new.experiment_id, new.variant, new.at / 86400000000000, 1)
    ON CONFLICT (ns, experiment_id, variant, day) DO UPDATE SET turns = turns + 1;
    INSERT INTO experiment_latencies (ns, experiment_id, variant, day, tenths, n)
    VALUES (new.ns, new.experiment_id, new.variant, new.at / 86400000000000, CAST(round(new.latency_ms * 10) AS INTEGER), 1)
    ON CONFLICT (ns, experiment_id, variant, day, tenths) DO UPDATE SET n = n + 1;
    INSERT INTO experiment_conversations (ns, experiment_id, conversation_id, variant, first_at)
    VALUES (new.ns, new.experiment_id, new.conversation_id, new.variant, new.at)
    ON CONFLICT (ns, experiment_id, conversation_id) DO UPDATE SET first_at = min(first_at, excluded.first_at);
END;
-- An ambient surfacing, with its outcome when it has one already.
CREATE TRIGGER experiment_surfaced AFTER INSERT ON surfacings
WHEN new.experiment_id != '' AND new.mode IN ('ambient', 'resurface') BEGIN
    INSERT INTO experiment_days (ns, experiment_id, variant, day, surfaced, used, helpful, ignored, dismissed)
    VALUES (new.ns, new.experiment_id, new.variant, new.at / 86400000000000, 1,
        new.outcome = 'used', new.outcome = 'helpful', new.outcome = 'ignored', new.outcome = 'dismissed')
    ON CONFLICT (ns, experiment_id, variant, day) DO UPDATE SET surfaced = surfaced + 1,
        used = used + excluded.used, helpful = helpful + excluded.helpful,
        ignored = ignored + excluded.ignored, dismissed = dismissed + excluded.dismissed;
END;
-- An outcome decided or replaced (a report after the implicit ignore).
CREATE TRIGGER experiment_outcome AFTER UPDATE OF outcome ON surfacings
WHEN old.experiment_id != '' AND old.mode IN ('ambient', 'resurface') AND old.outcome IS NOT new.outcome BEGIN
    UPDATE experiment_days SET
        used = used - (old.outcome = 'used') + (new.outcome = 'used'),
        helpful = helpful - (old.outcome = 'helpful') + (new.outcome = 'helpful'),
        ignored = ignored - (old.outcome = 'ignored') + (new.outcome = 'ignored'),
        dismissed = dismissed - (old.outcome = 'dismissed') + (new.outcome = 'dismissed')
    WHERE ns = old.ns AND experiment_id = old.experiment_id AND variant = old.variant AND day = old.at / 86400000000000;
END;
