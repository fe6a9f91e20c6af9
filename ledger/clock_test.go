package ledger

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// clockEngine is an engine whose own clock says 2030.
type clockEngine struct{ engine.Engine }

var engineTime = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func (clockEngine) Clock(context.Context, *sql.Tx) (time.Time, error) { return engineTime, nil }

// TestEngineClockJudges: with no clock injected, a store whose engine has
// a clock of its own (PostgreSQL's, shared by every host) stamps facts and
// judges deadlines by it; an injected clock still wins (tests).
func TestEngineClockJudges(t *testing.T) {
	s, clk := openTest(t)
	s.eng = clockEngine{s.eng}
	s.engineClock = true
	if _, err := s.Record(ctx, "k:engine", Payload{"a", "t", "b"}, RecordOptions{}); err != nil {
		t.Fatal(err)
	}
	s.engineClock = false
	if _, err := s.Record(ctx, "k:process", Payload{"a", "t", "b"}, RecordOptions{}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]time.Time{"k:engine": engineTime, "k:process": clk.Now()} {
		d, err := s.Status(ctx, key)
		if err != nil || len(d.Events) == 0 || !d.Events[0].At.Equal(want) {
			t.Fatalf("%s stamped %v, want %v (%v)", key, d.Events, want, err)
		}
	}
}
