package prodlike_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/testkit/prodlike"
)

// CONTRACT §17, issue 20's noisy neighbour in the production shape: separate `revops api`
// and `revops worker` processes (4 delivery slots) on PostgreSQL, the Temporal server
// with the dynamic config we ship, real HTTPS receivers. An organization whose receivers
// hang delays its own deliveries, not another's (webhooktest.NoisyNeighbour).
func TestNoisyNeighbourDelaysOnlyItsOwnDeliveriesInProductionShape(t *testing.T) {
	const slots = 4
	s := prodlike.Start(t, prodlike.Options{
		RetryInterval: time.Hour, // a held attempt that times out is not retried during the test
		Env: []string{
			"REVOPS_WEBHOOK_CA_FILE=" + webhooktest.CAFile(t),
			"REVOPS_WEBHOOK_ALLOW_PRIVATE=true", // the receivers are on loopback
			"REVOPS_WORKER_ACTIVITY_SLOTS=" + strconv.Itoa(slots),
		},
	})
	api := s.StartAPI("api")
	s.StartWorker("worker")
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: s.ClientTLS()}}
	client := func(org string) *revops.Client {
		c, err := revops.NewClient(revops.WithBaseURL(api.URL), revops.WithAPIKey(orgKey(t, s, org)), revops.WithHTTPClient(hc), revops.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	webhooktest.NoisyNeighbour(t, slots, client("Noisy"), client("Quiet"))
}
