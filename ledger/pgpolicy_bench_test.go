package ledger

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/approvals"
)

// BenchmarkPostgresServerPolicy measures what the database's own policy
// checks (schema 11) add to a guard that permits a new key: two ledgers
// with the same rules, one with the checks' triggers disabled by their
// owner (the schema 10 behaviour), guarded in turn, each call timed
// alone; the medians are reported. It runs once with a plain glob rule
// and once with 50 conditions that fail before an unconditional rule
// (BenchmarkDecide50's set).
//
//	TOLLGATE_TEST_BACKEND=postgres TOLLGATE_TEST_PG=... go test ./ledger -run '^$' -bench PostgresServerPolicy -benchtime 400x
func BenchmarkPostgresServerPolicy(b *testing.B) {
	if !onPostgres {
		b.Skip("the database's checks are PostgreSQL's")
	}
	sets := map[string][]approvals.Rule{
		"glob": {{Pattern: "refund*", Mode: approvals.Auto}},
	}
	for i := range 50 {
		sets["50conditions"] = append(sets["50conditions"], approvals.Rule{Pattern: "refund*", Mode: approvals.Auto,
			Condition: "context.amount > " + strings.Repeat("9", 1+i%5) + fmt.Sprintf(` && "x%d" in context.flags`, i)})
	}
	sets["50conditions"] = append(sets["50conditions"], approvals.Rule{Pattern: "refund*", Mode: approvals.Auto})
	for _, name := range []string{"glob", "50conditions"} {
		b.Run(name, func(b *testing.B) {
			var stores [2]*Store
			for i := range stores {
				s, err := Open(ctx, testLedger(b), Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				for _, r := range sets[name] {
					if _, err := s.SetPolicy(ctx, r, "root"); err != nil {
						b.Fatal(err)
					}
				}
				stores[i] = s
			}
			for _, t := range []string{"policy_evals", "approval_requests", "permits", "reports"} {
				if _, err := rawDB(b, testPath(stores[1])).Exec("ALTER TABLE " + t + " DISABLE TRIGGER " + t + "_follow_rules"); err != nil {
					b.Fatal(err)
				}
			}
			c := Context{"amount": 1.0, "flags": []string{"a", "b"}}
			var took [2][]float64
			n := 0
			b.ResetTimer()
			for b.Loop() {
				n++
				for i, s := range stores {
					t0 := time.Now()
					if a, err := s.Guard(ctx, fmt.Sprintf("g:%d", n), pay, GuardOptions{Agent: "bench", Context: c}); err != nil || a.Verdict != Permitted {
						b.Fatalf("%+v %v", a, err)
					}
					took[i] = append(took[i], float64(time.Since(t0).Microseconds()))
				}
			}
			b.StopTimer()
			med := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
			b.ReportMetric(med(took[0]), "us/guard-checked")
			b.ReportMetric(med(took[1]), "us/guard-unchecked")
			b.ReportMetric(med(took[0])-med(took[1]), "us-added")
		})
	}
}
