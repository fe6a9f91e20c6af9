package approvals

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// zoneinfo is the IANA time zone database as the Go toolchain compiles
// it (lib/time/zoneinfo.zip, public domain), built into the binary. A
// condition's zones are read from it alone: Go's time.LoadLocation reads
// ZONEINFO first and the host's zone folders next, and "Local" follows
// TZ, each of which the agent whose action is decided can choose
// (issue 42). docs/policy.md names where it and PostgreSQL's disagree.
//
//go:embed zoneinfo.zip
var zoneinfo []byte

// ErrLocalZone means a condition names the zone "Local" or "": the
// process's own zone, which its environment (TZ) chooses.
var ErrLocalZone = errors.New(`the zone "Local" (or "") is the evaluating process's own, which its environment chooses: name an IANA zone or a ±HH:MM offset`)

var (
	zipOnce  sync.Once
	zipFiles map[string]*zip.File
	zipErr   error
	zonesMu  sync.Mutex
	zones    = map[string]*time.Location{}
)

// LoadZone loads an IANA zone from the database built into the binary,
// never from the environment or the host: "Local" and "" are refused
// (ErrLocalZone), "UTC" is UTC.
func LoadZone(name string) (*time.Location, error) {
	switch name {
	case "", "Local":
		return nil, ErrLocalZone
	case "UTC":
		return time.UTC, nil
	}
	zonesMu.Lock()
	defer zonesMu.Unlock()
	if loc, ok := zones[name]; ok {
		return loc, nil
	}
	zipOnce.Do(func() {
		r, err := zip.NewReader(bytes.NewReader(zoneinfo), int64(len(zoneinfo)))
		if err != nil {
			zipErr = err
			return
		}
		zipFiles = make(map[string]*zip.File, len(r.File))
		for _, f := range r.File {
			zipFiles[f.Name] = f
		}
	})
	if zipErr != nil {
		return nil, fmt.Errorf("the built-in zone database: %w", zipErr)
	}
	f, ok := zipFiles[name]
	if !ok {
		return nil, fmt.Errorf("unknown time zone %s", name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, err
	}
	loc, err := time.LoadLocationFromTZData(name, data)
	if err != nil {
		return nil, err
	}
	if len(zones) >= 512 {
		clear(zones)
	}
	zones[name] = loc
	return loc, nil
}

// zoneOf is a getter's zone argument as CEL reads it (cel-go's own
// rules: a name, or an offset ±HH:MM), with names from LoadZone.
func zoneOf(val string) (*time.Location, error) {
	ind := strings.Index(val, ":")
	if ind == -1 {
		return LoadZone(val)
	}
	hr, err := strconv.Atoi(val[:ind])
	if err != nil {
		return nil, err
	}
	mins, err := strconv.Atoi(val[ind+1:])
	if err != nil {
		return nil, err
	}
	if hr < -23 || hr > 23 {
		return nil, fmt.Errorf("timezone offset hours out of range [-23, 23]: %s", val)
	}
	if mins < 0 || mins > 59 {
		return nil, fmt.Errorf("timezone offset minutes out of range [0, 59]: %s", val)
	}
	offset := hr*60 + mins
	if val[0] == '-' {
		offset = hr*60 - mins
	}
	return time.FixedZone("", offset*60), nil
}

// zonedGetters are the timestamp getters that take a zone, by their
// CEL overload ids, each computed as cel-go computes it.
var zonedGetters = []struct {
	fn, id string
	get    func(time.Time) int64
}{
	{"getFullYear", overloads.TimestampToYearWithTz, func(t time.Time) int64 { return int64(t.Year()) }},
	{"getMonth", overloads.TimestampToMonthWithTz, func(t time.Time) int64 { return int64(t.Month()) - 1 }},
	{"getDayOfYear", overloads.TimestampToDayOfYearWithTz, func(t time.Time) int64 { return int64(t.YearDay()) - 1 }},
	{"getDayOfMonth", overloads.TimestampToDayOfMonthZeroBasedWithTz, func(t time.Time) int64 { return int64(t.Day()) - 1 }},
	{"getDate", overloads.TimestampToDayOfMonthOneBasedWithTz, func(t time.Time) int64 { return int64(t.Day()) }},
	{"getDayOfWeek", overloads.TimestampToDayOfWeekWithTz, func(t time.Time) int64 { return int64(t.Weekday()) }},
	{"getHours", overloads.TimestampToHoursWithTz, func(t time.Time) int64 { return int64(t.Hour()) }},
	{"getMinutes", overloads.TimestampToMinutesWithTz, func(t time.Time) int64 { return int64(t.Minute()) }},
	{"getSeconds", overloads.TimestampToSecondsWithTz, func(t time.Time) int64 { return int64(t.Second()) }},
	{"getMilliseconds", overloads.TimestampToMillisecondsWithTz, func(t time.Time) int64 { return int64(t.Nanosecond() / 1e6) }},
}

// zoneEnvOptions replaces the standard zoned getters' implementations
// (same overload ids and signatures) with ones that load zones from
// LoadZone.
func zoneEnvOptions() []cel.EnvOption {
	var opts []cel.EnvOption
	for _, g := range zonedGetters {
		get := g.get
		opts = append(opts, cel.Function(g.fn, cel.MemberOverload(g.id, []*cel.Type{cel.TimestampType, cel.StringType}, cel.IntType,
			cel.BinaryBinding(func(ts, tz ref.Val) ref.Val {
				t, ok := ts.(types.Timestamp)
				if !ok {
					return types.MaybeNoSuchOverloadErr(ts)
				}
				s, ok := tz.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(tz)
				}
				loc, err := zoneOf(string(s))
				if err != nil {
					return types.WrapErr(err)
				}
				return types.Int(get(t.Time.In(loc)))
			}))))
	}
	return opts
}

// LocalZones lists where the condition names the zone "Local" or ""
// literally (line:column), which policy set refuses and policy list and
// verify report for a rule stored before.
func (c *Condition) LocalZones() []string { return c.localZones }

func localZoneUses(a *celast.AST) []string {
	var out []string
	celast.PreOrderVisit(a.Expr(), celast.NewExprVisitor(func(x celast.Expr) {
		if x.Kind() != celast.CallKind {
			return
		}
		call := x.AsCall()
		if !call.IsMemberFunction() || len(call.Args()) != 1 || !strings.HasPrefix(call.FunctionName(), "get") {
			return
		}
		arg := call.Args()[0]
		if arg.Kind() != celast.LiteralKind {
			return
		}
		if s, ok := arg.AsLiteral().(types.String); ok && (s == "Local" || s == "") {
			loc := a.SourceInfo().GetStartLocation(arg.ID())
			out = append(out, fmt.Sprintf("%s(%q) at %d:%d", call.FunctionName(), string(s), loc.Line(), loc.Column()+1))
		}
	}))
	return out
}
