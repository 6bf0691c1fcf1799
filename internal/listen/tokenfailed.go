package listen

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/blackbox"
	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/scheme"
)

// writeTokenFailed answers a probe whose OAuth 2.0 token could not be
// had: probe_success 0, never probed, and why on the family's help line
// (what the endpoint answered is not quoted; the secrets are masked).
func writeTokenFailed(w http.ResponseWriter, r *http.Request, m *blackbox.Module, o *scheme.Options, budget, waited time.Duration, why string) {
	why = strings.NewReplacer("\\", "\\\\", "\n", " ", "\r", " ").Replace(output.Untrusted(why))
	exposition := fmt.Sprintf(`# HELP probe_success Displays whether or not the probe was a success
# TYPE probe_success gauge
probe_success 0
# HELP probe_duration_seconds Returns how long the probe took to complete in seconds
# TYPE probe_duration_seconds gauge
probe_duration_seconds %s
# HELP healthctl_probe_not_started Why /probe answered without probing (always 1): %s
# TYPE healthctl_probe_not_started gauge
healthctl_probe_not_started{why="oauth2_token",prober="http"} 1
`, strconv.FormatFloat(waited.Seconds(), 'g', -1, 64), why)
	if r.URL.Query().Get("debug") == "true" {
		res := probe.Result{Outcome: classify.Unknown, Error: why}
		res.Timings.Set(probe.PhaseTotal, waited)
		WriteDebug(w, m, o, budget, &res, []byte(exposition))
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	io.WriteString(w, exposition)
}
