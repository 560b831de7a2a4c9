-- Usage over time (docs/dashboard.md): hourly counters (recalls and their time) and gauges
-- (memories by source and status) the usage job writes. `tenant` is filled from engram.tenant.
CREATE TABLE {schema}.usage_hourly (
    tenant    TEXT NOT NULL DEFAULT current_setting('engram.tenant', true),
    hour      TEXT NOT NULL,
    metric    TEXT NOT NULL,
    dimension TEXT NOT NULL DEFAULT '',
    value     DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (tenant, hour, metric, dimension)
);
ALTER TABLE {schema}.usage_hourly ENABLE ROW LEVEL SECURITY;
ALTER TABLE {schema}.usage_hourly FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON {schema}.usage_hourly
    USING (tenant = current_setting('engram.tenant', true))
    WITH CHECK (tenant = current_setting('engram.tenant', true));
GRANT SELECT, INSERT, UPDATE ON {schema}.usage_hourly TO engram_app;
