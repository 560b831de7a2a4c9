-- Usage over time (docs/dashboard.md): hourly counters (recalls and their time) and gauges
-- (memories by source and status) the usage job writes. Created with the file, or added to an older one.
CREATE TABLE IF NOT EXISTS usage_hourly (
    hour      TEXT NOT NULL,              -- YYYY-MM-DDTHH, UTC
    metric    TEXT NOT NULL,              -- recalls, recall_ms, recall_ms_bucket, memories
    dimension TEXT NOT NULL DEFAULT '',   -- a bucket's bound, a memory's source/status
    value     REAL NOT NULL,
    PRIMARY KEY (hour, metric, dimension)
) WITHOUT ROWID;
