-- "No time" was stored as 0, which is also the Unix epoch, so a memory created at
-- 1970-01-01T00:00:00Z read back as unset. It is now the smallest int64 (noTime in codec.go),
-- which no valid time encodes to. The optional time columns' zeros become it; the required
-- ones (surfacings.at, events.at, decisions.at, leases.expires_at) were never unset, so a 0
-- there is the epoch and stays. Columns added later with DEFAULT 0 must be rewritten too.
UPDATE memories SET created_at = -9223372036854775807 - 1 WHERE created_at = 0;
UPDATE memories SET valid_at = -9223372036854775807 - 1 WHERE valid_at = 0;
UPDATE memories SET invalid_at = -9223372036854775807 - 1 WHERE invalid_at = 0;
UPDATE memories SET last_used = -9223372036854775807 - 1 WHERE last_used = 0;
UPDATE memories SET last_surfaced = -9223372036854775807 - 1 WHERE last_surfaced = 0;
UPDATE concepts SET first_seen = -9223372036854775807 - 1 WHERE first_seen = 0;
UPDATE concepts SET last_seen = -9223372036854775807 - 1 WHERE last_seen = 0;
UPDATE edges SET last_co_occurred = -9223372036854775807 - 1 WHERE last_co_occurred = 0;
UPDATE edges SET last_decayed = -9223372036854775807 - 1 WHERE last_decayed = 0;
UPDATE surfacings SET outcome_at = -9223372036854775807 - 1 WHERE outcome_at = 0;
UPDATE conversations SET updated_at = -9223372036854775807 - 1 WHERE updated_at = 0;
UPDATE queue SET due_at = -9223372036854775807 - 1 WHERE due_at = 0;
UPDATE queue SET queued_at = -9223372036854775807 - 1 WHERE queued_at = 0;
UPDATE job_runs SET started_at = -9223372036854775807 - 1 WHERE started_at = 0;
UPDATE job_runs SET ended_at = -9223372036854775807 - 1 WHERE ended_at = 0;
UPDATE decisions SET rewarded_at = -9223372036854775807 - 1 WHERE rewarded_at = 0;
UPDATE experiments SET stopped_at = -9223372036854775807 - 1 WHERE stopped_at = 0;
