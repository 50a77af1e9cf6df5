package devstack

import (
	"os"
	"testing"

	"go.temporal.io/server/common/dynamicconfig"
	"gopkg.in/yaml.v3"
)

// TestPacedSizesMatchProduction: `revops dev` and the production dynamic config size the
// paced queue alike (CONTRACT §27), above REVOPS_PACED_ENDPOINTS' default of 2,000.
func TestPacedSizesMatchProduction(t *testing.T) {
	raw, err := os.ReadFile("../../../deploy/temporal/dynamicconfig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var prod map[string][]struct {
		Value       any               `yaml:"value"`
		Constraints map[string]string `yaml:"constraints"`
	}
	if err := yaml.Unmarshal(raw, &prod); err != nil {
		t.Fatal(err)
	}
	dev := dynamicConfig()
	for name, key := range map[string]dynamicconfig.Key{
		"matching.maxFairnessKeyWeightOverrides": dynamicconfig.MatchingMaxFairnessKeyWeightOverrides.Key(),
		"matching.fairnessKeyRateLimitCacheSize": dynamicconfig.MatchingFairnessKeyRateLimitCacheSize.Key(),
	} {
		vs := prod[name]
		if len(vs) != 1 || vs[0].Constraints["taskQueueName"] != "revops-webhooks-paced" {
			t.Fatalf("%s in production: %+v", key, vs)
		}
		if vs[0].Value != dev[key] {
			t.Errorf("%s: production %v, dev %v", key, vs[0].Value, dev[key])
		}
		if n, _ := vs[0].Value.(int); n <= 2000 {
			t.Errorf("%s: %v is not above the 2,000 paced endpoints a deployment may hold", key, vs[0].Value)
		}
	}
	if dev[dynamicconfig.MatchingEnableFairness.Key()] != true {
		t.Error("fairness is off in dev")
	}
}
