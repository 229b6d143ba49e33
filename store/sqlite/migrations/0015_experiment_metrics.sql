-- An experiment declares the metric its report ranks by ('' in a record made before: the
-- default, reward per turn). The report's reward per turn gives an empty turn its own
-- reward, so the running counts also count the turns that surfaced nothing; a decision's
-- surfaced is written with it and never changes, so counting at insert is exact.
ALTER TABLE experiments ADD COLUMN primary_metric TEXT NOT NULL DEFAULT '';
ALTER TABLE experiment_days ADD COLUMN empty_turns INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER experiment_empty_turn AFTER INSERT ON decisions WHEN new.experiment_id != '' AND new.surfaced = 0 BEGIN
    INSERT INTO experiment_days (ns, experiment_id, variant, day, empty_turns)
    VALUES (new.ns, new.experiment_id, new.variant, new.at / 86400000000000, 1)
    ON CONFLICT (ns, experiment_id, variant, day) DO UPDATE SET empty_turns = empty_turns + 1;
END;
-- The turns counted so far.
UPDATE experiment_days SET empty_turns = (
    SELECT COUNT(*) FROM decisions d
    WHERE d.ns = experiment_days.ns AND d.experiment_id = experiment_days.experiment_id AND d.experiment_id != ''
      AND d.variant = experiment_days.variant AND d.at / 86400000000000 = experiment_days.day AND d.surfaced = 0);
