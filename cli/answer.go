package cli

import (
	"errors"

	"github.com/tollgate-dev/tollgate/exitcode"
)

// refusal is what a command prints when it does not succeed: its exit
// code and its JSON object. A conflict and a fence are answers an agent
// acts on (the stored hash and the differing fields; the epochs), so they
// carry their facts; every other refusal is {"error", "exit_code"}.
// Beyond a usage error, which only a command line makes, the mapping is
// exitcode.Refusal, the one the HTTP service sends too.
func refusal(err error) (int, map[string]any) {
	var ue usageError
	if errors.As(err, &ue) {
		return ExitUsage, map[string]any{"error": err.Error(), "exit_code": ExitUsage}
	}
	return exitcode.Refusal(err)
}
