-- 0024: a check job may be pinned to a driver as well as a GPU model: only a GPU runner that
-- reports that driver claims it, and with none online it is awaiting_runner. A bisection's
-- probes are pinned to the driver of its bad end's evidence, so that every probe of one
-- search is timed in one environment even where runners of one GPU model run different
-- drivers. NULL (a job) or '' (a bisection): any driver.
ALTER TABLE jobs ADD COLUMN driver TEXT;
ALTER TABLE bisections ADD COLUMN driver TEXT NOT NULL DEFAULT '';
