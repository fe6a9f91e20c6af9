package ledger

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkOpenGuardClose is what one `tollgate guard` process does
// inside: open the ledger, guard a new key, close.
func BenchmarkOpenGuardClose(b *testing.B) {
	path := filepath.Join(b.TempDir(), "l.db")
	s, _ := Open(ctx, path, Options{})
	s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(ctx, path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Guard(ctx, fmt.Sprintf("k:%d", i), pay, GuardOptions{}); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkOpenGuardCloseOneShot is the same with the CLI's OneShot option.
func BenchmarkOpenGuardCloseOneShot(b *testing.B) {
	path := filepath.Join(b.TempDir(), "l.db")
	s, _ := Open(ctx, path, Options{})
	s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		openGuardClose(b, path, fmt.Sprintf("k:%d", i))
	}
}

// openGuardClose is one `tollgate guard` process's work in the ledger:
// a one-shot open, Guard of key, close.
func openGuardClose(b *testing.B, path, key string) {
	s, err := Open(ctx, path, Options{OneShot: true})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Guard(ctx, key, pay, GuardOptions{}); err != nil {
		b.Fatal(err)
	}
	s.Close()
}
