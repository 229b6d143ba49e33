-- Proactive prediction (docs/design.md#prediction-and-thresholds) learns which topics follow which from the log of ambient
-- turns: each decision keeps its turn's context concepts, and a conversation the concept
-- sets of its latest turns (a JSON list of lists), so a prediction needs no log read.
ALTER TABLE decisions ADD COLUMN concepts TEXT NOT NULL DEFAULT '';
ALTER TABLE conversations ADD COLUMN recent_turns TEXT NOT NULL DEFAULT '';
-- The latest decisions of a namespace, newest first, without sorting all of them.
CREATE INDEX decisions_at ON decisions (ns, at, turn_id);
