-- A catalog in which dbo.Orders of the planlab plans has a filtered index:
-- statements compiled with QUOTED_IDENTIFIER OFF cannot use it.
CREATE TABLE dbo.Orders (OrderId int NOT NULL CONSTRAINT PK_Orders PRIMARY KEY CLUSTERED, OrderDate datetime2(0) NOT NULL,
  Status tinyint NOT NULL, Notes nvarchar(400) NULL);
CREATE INDEX IX_Orders_OrderDate_Narrow ON dbo.Orders (OrderDate);
CREATE INDEX IX_Orders_Open ON dbo.Orders (OrderDate) WHERE Status = 0;
