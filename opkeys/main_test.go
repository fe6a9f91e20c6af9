package opkeys

import (
	"os"
	"testing"

	"github.com/tollgate-dev/tollgate/internal/hostguard"
)

// TestMain points the system anchor at a temporary folder (tests that
// need one write it there) and fails the run if it touched the host's.
func TestMain(m *testing.M) {
	os.Exit(hostguard.Main(func(p hostguard.Places) { SystemAnchorPath = p.Anchor }, m.Run))
}
