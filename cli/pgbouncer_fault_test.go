package cli_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/cli"
	"github.com/tollgate-dev/tollgate/internal/pgtest"
)

// TestPostgresFaultsSurvivedThroughPgbouncer is TestPostgresFaultsSurvived
// behind pgbouncer in transaction pooling mode, as many sites pool
// connections: 32 agent processes and two operators reach a cluster of
// the test's own through pgbouncer (.ci/pgbouncer: scram over TLS on
// both sides) while the test terminates, every 1.5 s, the server
// sessions pgbouncer holds for the agents' roles (what an operator's
// pg_terminate_backend or a server-side idle timeout does behind the
// pooler), and twice kills pgbouncer itself (SIGKILL, as a crash) and
// starts it again on the same port. Afterwards every acknowledged fact
// is in the ledger, no key has two permits and none acknowledged as
// permitted was permitted again, every interrupted outcome is uncertain
// or settled, verify is clean, and no process answered a fault with
// exit 1: only 0, 75, 74 and the ledger's own answers.
//
// It runs in the pooled run (TOLLGATE_TEST_PG_ADMIN set, as .ci/run sets
// it), where pgbouncer is installed, on a cluster and a pooler of its
// own, so that killing the pooler disturbs no other test.
func TestPostgresFaultsSurvivedThroughPgbouncer(t *testing.T) {
	if testing.Short() {
		t.Skip("a stress of agent processes while pgbouncer fails: not under -short")
	}
	if !onPostgres || pgtest.Direct() {
		t.Skip("runs once, in the pooled PostgreSQL run (TOLLGATE_TEST_PG_ADMIN set, TOLLGATE_TEST_BACKEND=postgres)")
	}
	agents := agentCount(32)
	const stressFor = 25 * time.Second
	c := pgtest.NewCluster(t)
	b := c.Bouncer(t)
	r := newRig(t, c, b.URL)
	dbName := strings.TrimPrefix(mustURL(t, r.owner).Path, "/")

	ctx, stop, wg := r.start(t, agents, stressFor)
	f := injectFaults(t, ctx, stop, wg, "pgbouncer killed and started again", b.Restart,
		func() (int, error) { return c.Terminate(ctx, fmt.Sprintf("usename LIKE '%s_bot%%'", dbName)) })
	wg.Wait()
	terminated, restarts := f.done(t)
	k := r.answers(t)
	t.Logf("%d agents through pgbouncer, %d processes in %s; %d server sessions terminated, %d pooler restarts; exit codes: %v",
		agents, len(r.log.all), stressFor, terminated, restarts, k.codes)
	if restarts != 2 || terminated == 0 {
		t.Fatalf("faults injected: %d pooler restarts, %d server sessions terminated: the stress did not exercise them", restarts, terminated)
	}
	if len(k.permits) < agents {
		t.Fatalf("only %d permits in %s for %d agents", len(k.permits), stressFor, agents)
	}
	r.checkLedger(t, ctx, k)
	want(t, run(t, r.owner, "", "verify"), cli.ExitOK)
}
