package replica

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldgw/herald/sessions/pgtest"
)

// BenchmarkReplicas reports messages answered per second by one gateway
// on SQLite alone, and by 1, 2 and 3 replicas coordinating on PostgreSQL
// and keeping their state there, for the same load: 100 chats
// of 10 messages each, spread over the replicas, answered by the echo
// model. scripts/bench-replicas prints the ratios.
func BenchmarkReplicas(b *testing.B) {
	const chats, per = 100, 10
	for _, mode := range []struct {
		name     string
		replicas int
		pg       bool
	}{{"sqlite-1", 1, false}, {"postgres-1", 1, true}, {"postgres-2", 2, true}, {"postgres-3", 3, true}} {
		b.Run(mode.name, func(b *testing.B) {
			url := ""
			if mode.pg {
				url = pgtest.URL(b)
			}
			rec := newRecorder()
			var nodes []*node
			for i := range mode.replicas {
				nodes = append(nodes, startNode(b, rec, fmt.Sprintf("r%d", i), nodeOptions{dbURL: url, cfg: Config{PollEvery: 500 * time.Millisecond}}))
			}
			b.ResetTimer()
			start := time.Now()
			total := 0
			for it := 0; b.Loop(); it++ {
				sendAll(b, nodes, fmt.Sprintf("i%d-", it), chats, per, false)
				total += chats * per
				rec.waitFor(b, 5*time.Minute, "every answer", func(all []sent) bool { return countAnswers(all) >= total })
			}
			b.ReportMetric(float64(total)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}
