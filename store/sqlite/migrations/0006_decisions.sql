-- The threshold bandit's decision per ambient turn (docs/design.md#prediction-and-thresholds), empty turns included, and
-- whether the bandit has learned from it yet. The upkeep job reads the pending ones oldest
-- first.
CREATE TABLE decisions (
    ns              TEXT    NOT NULL,
    turn_id         TEXT    NOT NULL,
    conversation_id TEXT    NOT NULL DEFAULT '',
    conv_type       TEXT    NOT NULL DEFAULT '',
    variant         TEXT    NOT NULL DEFAULT '',
    policy          TEXT    NOT NULL DEFAULT '',
    arm             INTEGER NOT NULL DEFAULT -1,
    threshold       REAL    NOT NULL DEFAULT 0,
    prob            REAL    NOT NULL DEFAULT 0,
    surfaced        INTEGER NOT NULL DEFAULT 0,
    at              INTEGER NOT NULL,
    rewarded        INTEGER NOT NULL DEFAULT 0,
    reward          REAL    NOT NULL DEFAULT 0,
    rewarded_at     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (ns, turn_id)
);
CREATE INDEX decisions_pending ON decisions (ns, rewarded, at);
