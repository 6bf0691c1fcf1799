package render

import (
	"errors"
	"io"
	"time"

	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/report"
)

// Nagios is -o nagios: a result as a monitoring plugin reports it (the
// status line, perfdata, the plugin's exit code), for the results that
// have that form (Plugin).
var Nagios Format = nagios{}

// Plugin is a result's monitoring-plugins form: its text, and the error
// that carries the plugin's exit code (its 2 is CRITICAL, not a usage
// error).
type Plugin interface {
	Plugin() (string, error)
}

// Budgeted is a format whose check has one whole time budget that every
// window fits inside (the plugins' -t), and thresholds of its own.
type Budgeted interface {
	// Budget is the budget when none is given.
	Budget() time.Duration
}

// UsageLiner is a format whose readers take a usage error from stdout,
// with an exit code of their own (a plugin's UNKNOWN).
type UsageLiner interface {
	UsageLine(msg string) (code int, line string)
}

type nagios struct{}

func (nagios) Write(w Writer, r Result) error {
	p, ok := r.(Plugin)
	if !ok {
		return errors.New("this result has no -o nagios form")
	}
	text, err := p.Plugin()
	io.WriteString(w.Out, text)
	return err
}

// Budget is check_http's and check_curl's default -t.
func (nagios) Budget() time.Duration { return 10 * time.Second }

// UsageLine is a usage error as a plugin's UNKNOWN, its one line on
// stdout (Nagios shows stdout only: without it, "(No output on stdout)";
// on both streams it would show twice where they are merged).
func (nagios) UsageLine(msg string) (int, string) {
	return exitcode.NagiosUnknown, report.NagiosUnknownLine(msg)
}
