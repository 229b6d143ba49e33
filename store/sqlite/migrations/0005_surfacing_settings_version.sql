-- Each surfacing records the version of its namespace's settings it was ranked under, so
-- engagement can be read per version of a bot's character (0: no settings written yet).
ALTER TABLE surfacings ADD COLUMN settings_version INTEGER NOT NULL DEFAULT 0;
