package ledger

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"hash"
	"math/bits"
)

// factSum proves that the fact rows and the events that commit them are
// the same multiset of (table, row, content hash, key) without joining
// them: verify's chain walk subtracts what each event commits, and a plain
// scan of each fact table adds what each row is, each element through
// HMAC under a key drawn for this run. The sum is modulo 2^256, not XOR,
// so a row committed twice or three times does not cancel to once. It is
// zero exactly when every row is committed by exactly one event that names
// its content and its key and every event's row is there (the checks the
// join made row by row), unless someone who never saw the key found a
// collision. When it is not zero, verify runs the row-by-row join to name
// what differs.
type factSum struct {
	mac hash.Hash
	acc [4]uint64
	buf []byte
}

func newFactSum() (*factSum, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return &factSum{mac: hmac.New(sha256.New, key)}, nil
}

// element is the HMAC of one (table, row, content hash, key), each field
// written with its length so none can shift into another.
func (s *factSum) element(table, row, sha, key string) [4]uint64 {
	s.buf = s.buf[:0]
	for _, f := range [...]string{table, row, sha, key} {
		s.buf = append(s.buf, byte(len(f)>>24), byte(len(f)>>16), byte(len(f)>>8), byte(len(f)))
		s.buf = append(s.buf, f...)
	}
	s.mac.Reset()
	s.mac.Write(s.buf)
	var sum [sha256.Size]byte
	s.mac.Sum(sum[:0])
	var e [4]uint64
	for i := range e {
		for _, b := range sum[i*8 : i*8+8] {
			e[i] = e[i]<<8 | uint64(b)
		}
	}
	return e
}

// row adds a fact row as the table stores it.
func (s *factSum) row(table, row, sha, key string) {
	e := s.element(table, row, sha, key)
	var c uint64
	for i := range s.acc {
		s.acc[i], c = bits.Add64(s.acc[i], e[i], c)
	}
}

// event takes away the row an event says it commits.
func (s *factSum) event(table, row, sha, key string) {
	e := s.element(table, row, sha, key)
	var b uint64
	for i := range s.acc {
		s.acc[i], b = bits.Sub64(s.acc[i], e[i], b)
	}
}

// zero reports whether the rows and the events cancel.
func (s *factSum) zero() bool { return s.acc == [4]uint64{} }
