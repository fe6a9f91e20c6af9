package benchledger

import (
	"context"
	"testing"

	"github.com/tollgate-dev/tollgate/ledger"
)

func TestPathBuildsTheMix(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	path, err := Path(2000, 20)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ledger.Open(context.Background(), path, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, _ := s.Counts(context.Background())
	if c.All != 2000 || c.Pending != 20 {
		t.Fatalf("counts %+v", c)
	}
}
