-- 0011: how many timed samples of a figure the harness dropped because the SM clock read
-- below the throttle threshold after them (the bench report's timing.discarded_throttled,
-- summed over the precise rounds). NULL for results stored before, or never timed.
ALTER TABLE results ADD COLUMN samples_dropped INTEGER CHECK (samples_dropped IS NULL OR samples_dropped >= 0);
