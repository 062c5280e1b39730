package catalog

import "testing"

func TestCostThresholdForParallelism(t *testing.T) {
	doc := `{"planlint_catalog": 1, "server": {"major_version": 16, "cost_threshold_for_parallelism": 50}, "tables": []}`
	c, err := Load(writeFile(t, "facts.json", []byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	if v := c.Server.CostThresholdForParallelism; v == nil || *v != 50 {
		t.Fatalf("cost threshold = %v, want 50", v)
	}
	// A later source without the setting keeps it; one with it wins.
	dst := &Catalog{}
	dst.Merge(c)
	dst.Merge(&Catalog{Server: &Server{MajorVersion: 16}})
	if v := dst.Server.CostThresholdForParallelism; v == nil || *v != 50 {
		t.Errorf("after merging a source without it: %v, want 50", v)
	}
	five := 5.0
	dst.Merge(&Catalog{Server: &Server{CostThresholdForParallelism: &five}})
	if v := dst.Server.CostThresholdForParallelism; *v != 5 {
		t.Errorf("after merging 5: %v", *v)
	}
}
