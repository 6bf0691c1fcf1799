// Package version says which build of healthctl this is: the release
// build sets the variables through -ldflags -X; a `go install` build falls
// back to the module version Go recorded.
package version

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by the release build: -ldflags "-X github.com/healthctl/healthctl/internal/version.version=1.2.3 ...".
var (
	version = ""
	commit  = ""
	date    = ""
)

// String is the version: the release's, else the module version of a
// `go install …@vX`, else "dev".
func String() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return "dev"
}

// Info is everything `healthctl version` prints.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// Get returns the build's Info; commit and date come from the release
// build, else from the VCS stamp Go records in a build from a checkout.
func Get() Info {
	in := Info{Version: String(), Commit: commit, Date: date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if in.Commit == "" || in.Date == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				switch {
				case s.Key == "vcs.revision" && in.Commit == "":
					in.Commit = s.Value
				case s.Key == "vcs.time" && in.Date == "":
					in.Date = s.Value
				}
			}
		}
	}
	return in
}
