package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// releaseVersion is the release's stamp, set by scripts/release with
// -ldflags "-X github.com/tollgate-dev/tollgate/cli.releaseVersion=...";
// empty in any other build, which then reports what Go embedded.
var releaseVersion string

// buildVersion is what `tollgate version` reports: which build this is,
// so a bug report can say where it came from.
type buildVersion struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"commit_time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// readVersion reads the version from the release's stamp, else from the
// module's version Go embeds (a `go install ...@v1.2.3` build), else
// "devel"; the commit, its time and whether the tree had uncommitted
// changes come from the VCS settings go build embeds (absent with
// -buildvcs=false or outside a repository).
func readVersion(info *debug.BuildInfo, ok bool) buildVersion {
	v := buildVersion{Version: "devel"}
	if ok {
		v.Go = info.GoVersion
		if m := info.Main.Version; m != "" && m != "(devel)" {
			v.Version = m
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if releaseVersion != "" {
		v.Version = releaseVersion
	}
	return v
}

// text is the one line `tollgate --version` prints.
func (v buildVersion) text(w io.Writer) {
	commit := v.Commit
	if commit == "" {
		commit = "unknown commit"
	}
	if v.Modified {
		commit += " (modified)"
	}
	fmt.Fprintf(w, "tollgate %s %s %s\n", v.Version, commit, v.Go)
}

func runVersion(_ context.Context, c *cmdCtx, _ *noFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	v := readVersion(debug.ReadBuildInfo())
	c.print(ok(v, v.text))
	return ExitOK, nil
}
