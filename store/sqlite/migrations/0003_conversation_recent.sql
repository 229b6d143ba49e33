-- A conversation keeps the memories surfaced in its last turns, one list per turn, so ambient
-- recall avoids repeating them without reading the surfacing log on every turn.
ALTER TABLE conversations ADD COLUMN recent_surfaced TEXT NOT NULL DEFAULT '';
