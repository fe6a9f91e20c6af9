package cli

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// closeFails is a ledger whose Close fails, as a pooled PostgreSQL
// connection the server cut after the answer does.
type closeFails struct{ Ledger }

func (closeFails) Close() error {
	return errors.New("tls: failed to send closeNotify alert (but connection was closed anyway): broken pipe")
}

// TestCloseAfterAnswerKeepsTheAnswer: a call whose answer was stored is
// answered with its own code even when closing the ledger then fails; the
// failure is a warning on stderr. Before, the close error replaced the
// answer and an agent's committed report exited 1.
func TestCloseAfterAnswerKeepsTheAnswer(t *testing.T) {
	var out, errw strings.Builder
	c := &cmdCtx{env: Env{Stdout: &out, Stderr: &errw}, stdout: &out}
	code, err := runWith(c, closeFails{}, func(Ledger) (answer, error) {
		return ok(nil, func(w io.Writer) { io.WriteString(w, "reported\n") }), nil
	})
	if err != nil || code != ExitOK || !strings.Contains(out.String(), "reported") {
		t.Fatalf("code %d, err %v, stdout %q: want the answer", code, err, out.String())
	}
	if !strings.Contains(errw.String(), "warning") || !strings.Contains(errw.String(), "closeNotify") {
		t.Fatalf("stderr %q: want a warning naming the close failure", errw.String())
	}
	// A failed call is still its own failure.
	want := errors.New("refused")
	if _, err := runWith(c, closeFails{}, func(Ledger) (answer, error) { return answer{}, want }); !errors.Is(err, want) {
		t.Fatalf("err %v, want the call's own", err)
	}
}
