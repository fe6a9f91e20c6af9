// Package snapshot reads and writes the frozen schema snapshots tests
// compare against (a ledger at the baseline, ledgers the development
// builds made). They are generated, never edited, and stored gzipped:
// they are data, not a second copy of the schema to keep in step with
// the definition files, and they stay out of duplicates' reading.
package snapshot

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
)

// Read is the text of the gzipped snapshot at path.
func Read(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(z)
	return string(b), err
}

// Write stores text gzipped at path, with no name or time in the
// header, so that the same text always makes the same bytes.
func Write(path, text string) error {
	var b bytes.Buffer
	z, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := z.Write([]byte(text)); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
