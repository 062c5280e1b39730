-- A catalog in which dbo.ILEC_Switch_Capacity has gained a filtered index
-- since the HJMchor2 plan was captured: its writes under
-- QUOTED_IDENTIFIER OFF now fail with error 1934.
CREATE TABLE dbo.ILEC_Switch_Capacity (CO varchar(20) NULL, AreaDes varchar(50) NULL);
CREATE INDEX IX_ILEC_Switch_Capacity_CO ON dbo.ILEC_Switch_Capacity (CO) WHERE CO IS NOT NULL;
