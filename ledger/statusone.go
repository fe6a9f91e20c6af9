package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// The parts of statusSQL's answer, in the order it returns them: the
// key's page row (intent, stage, deadline, archive stub), then each
// key-scoped fact table's rows, its events, its archive's file and the
// database's clock.
const (
	partPage    = 0
	partEvents  = 100
	partArchive = 101
	partClock   = 102
)

// statusSQL is, on PostgreSQL, everything a status of one key reads but
// the proofs of operators' signatures, in one statement: a statement is
// one snapshot, so it needs no transaction around it, and the client
// makes one round trip where a read transaction made one per table. It
// reads the same tables and views as the caller's role, so what the role
// may not see (another agent's payload bodies, schema 10) it does not see
// here either. Each row is (part, order, the columns as a JSON array):
// all the ledger's columns are BIGINT or TEXT, which JSON carries exactly.
var statusSQL = func() string {
	var b strings.Builder
	b.WriteString(fmt.Sprintf("SELECT %d, 0::bigint, json_build_array(i.action_key, i.payload_sha256, coalesce(ak.state, %s), %s, coalesce(ak.archive_id, 0), coalesce(ak.result, ''))::text%s%s WHERE i.action_key = $1",
		partPage, stageSQL, deadlineSQL, factsFrom, archivedJoin))
	for i := range keyTables {
		t := &keyTables[i]
		if t.name == "set_aside" {
			continue // always empty on PostgreSQL (loadKeyRows)
		}
		ord := "0::bigint"
		if t.intID {
			ord = t.id
		}
		fmt.Fprintf(&b, "\nUNION ALL SELECT %d, %s, json_build_array(%s)::text FROM %s WHERE %s = $1", i+1, ord, t.cols, t.name, t.keyCol)
	}
	fmt.Fprintf(&b, "\nUNION ALL SELECT %d, seq, json_build_array(%s)::text FROM events WHERE action_key = $1", partEvents, eventCols)
	fmt.Fprintf(&b, "\nUNION ALL SELECT %d, 0, json_build_array(a.file)::text FROM archived_keys x JOIN archives a ON a.id = x.archive_id WHERE x.action_key = $1", partArchive)
	fmt.Fprintf(&b, "\nUNION ALL SELECT %d, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, NULL WHERE $2", partClock)
	b.WriteString("\nORDER BY 1, 2")
	return b.String()
}()

// statusOneTrip answers Status on PostgreSQL in one round trip
// (statusSQL). done is false when the key has facts an operator signed:
// their proofs read the operator registry, which the full read in one
// transaction does (status).
func (s *Store) statusOneTrip(ctx context.Context, d *Detail) (done bool, err error) {
	clock := s.engineClock && !s.noEngineClock.Load()
	var k *keyRows
	var events []Event
	var archiveFile string
	var now int64
	err = s.retry(ctx, s.attemptTimeout, func(ctx context.Context) error {
		k, events, archiveFile, now = nil, nil, "", 0
		rows, err := s.r.QueryContext(ctx, statusSQL, d.Key, clock)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var part int
			var ord int64
			var cols *string
			if err := rows.Scan(&part, &ord, &cols); err != nil {
				return err
			}
			if part == partClock {
				now = ord
				continue
			}
			if part != partPage && k == nil {
				continue // no intent: not found, whatever rows name the key
			}
			r, err := decodeJSONRow(*cols)
			if err != nil {
				return err
			}
			switch {
			case part == partPage:
				k = &keyRows{facts: map[string][]factRow{}}
				var stage string
				if err := r.Scan(&k.key, &k.sha256, &stage, &k.deadline, &k.archive, &k.archResult); err != nil {
					return err
				}
				k.stage = State(stage)
			case part == partEvents:
				var e Event
				detail, _, err := scanEvent(r, &e)
				if err != nil {
					return err
				}
				_ = json.Unmarshal([]byte(detail), &e.Detail) // as timeline does
				events = append(events, e)
			case part == partArchive:
				if err := r.Scan(&archiveFile); err != nil {
					return err
				}
			case part >= 1 && part <= len(keyTables):
				t := &keyTables[part-1]
				vals := make([]any, t.ncols())
				ptrs := make([]any, len(vals))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := r.Scan(ptrs...); err != nil {
					return err
				}
				k.facts[t.name] = append(k.facts[t.name], vals)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return false, err
	}
	if k == nil {
		return true, ErrNotFound
	}
	if k.needsProofs() {
		return false, nil
	}
	if !clock {
		now = toMS(s.now())
	}
	detailFrom(k, now, d)
	if d.Archive != 0 {
		if archiveFile == "" {
			return true, fmt.Errorf("archive %d of %s: %w", d.Archive, d.Key, errNoArchiveRow)
		}
		d.ArchiveFile = archiveFile
	}
	if r, t := k.one("payloads"); r != nil {
		if c := r.str(t, "canonical"); c != "" {
			if p, err := DecodePayload([]byte(c)); err == nil {
				d.Payload = &p
			}
		}
	}
	d.Events = events
	d.dropForged(d.Events)
	return true, nil
}

// errNoArchiveRow is a stub that names an archive the ledger does not
// list (only a hand-made one): the full read fails there too.
var errNoArchiveRow = errors.New("no such archive row")

// jsonRow is one row of columns that arrived as a JSON array, scanned as
// database/sql scans a row: integers into integer kinds (or as int64),
// text into string kinds, NULL only into an interface.
type jsonRow []any

func decodeJSONRow(text string) (jsonRow, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var r jsonRow
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	for i, v := range r {
		if n, ok := v.(json.Number); ok {
			x, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("column %d: %w", i+1, err)
			}
			r[i] = x
		}
	}
	return r, nil
}

// Scan implements the Scan that scanEvent and scanFact take.
func (r jsonRow) Scan(dest ...any) error {
	if len(dest) != len(r) {
		return fmt.Errorf("%d columns, %d destinations", len(r), len(dest))
	}
	for i, d := range dest {
		if p, ok := d.(*any); ok {
			(*p) = r[i]
			continue
		}
		v := reflect.ValueOf(d).Elem()
		switch x := r[i].(type) {
		case string:
			if v.Kind() != reflect.String {
				return fmt.Errorf("column %d: text into %s", i+1, v.Type())
			}
			v.SetString(x)
		case int64:
			if !v.CanInt() {
				return fmt.Errorf("column %d: integer into %s", i+1, v.Type())
			}
			v.SetInt(x)
		default:
			return fmt.Errorf("column %d: %T into %s", i+1, r[i], v.Type())
		}
	}
	return nil
}
