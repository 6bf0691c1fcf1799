package watch

import (
	"context"
	"os"
	"time"

	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/proc"
)

// Defaults of the --on-redeploy hook.
const (
	DefaultHookTimeout = 30 * time.Second
	// HookMaxOutput bounds the captured output of one hook run.
	HookMaxOutput = 4 << 10
)

// HookResult is how one hook run went; the hook's failure is reported, never
// fatal.
type HookResult struct {
	OK        bool   `json:"ok"`
	Status    string `json:"status"`
	Output    string `json:"output,omitempty"`
	Truncated bool   `json:"output_truncated,omitempty"`
	TimedOut  bool   `json:"timed_out,omitempty"`
	// Interrupted says a signal to healthctl cut the hook short (or kept it
	// from starting): not a timeout, and not done; its redeploy stays
	// pending in the state.
	Interrupted bool          `json:"interrupted,omitempty"`
	Duration    time.Duration `json:"-"`
}

// ShellHook returns a Hook that runs line with /bin/sh -c, in its own
// process group, bounded by timeout, output captured up to HookMaxOutput,
// with the decision in its environment:
// HEALTHCTL_TARGET, HEALTHCTL_URL (redacted), HEALTHCTL_OUTCOME,
// HEALTHCTL_REASON, HEALTHCTL_DECISION_WHY.
func ShellHook(line string, timeout time.Duration) Hook {
	return func(ctx context.Context, t *Endpoint, r probe.Result, d policy.Decision) *HookResult {
		spec := proc.Spec{Argv: proc.Shell(line), Env: []string{
			"HEALTHCTL_TARGET=" + t.Name,
			"HEALTHCTL_URL=" + t.URL,
			"HEALTHCTL_OUTCOME=" + string(r.Outcome),
			"HEALTHCTL_REASON=" + string(r.Reason),
			"HEALTHCTL_DECISION_WHY=" + d.Why,
		}, Attr: proc.DieWithParent}
		red := hookRedactor(t)
		spec.Environ, spec.Env = hookEnviron(os.Environ(), red, spec.Env), nil
		res, err := proc.Run(ctx, spec, timeout, HookMaxOutput)
		if err != nil {
			return &HookResult{Status: "did not start: " + err.Error()}
		}
		h := &HookResult{Status: res.Status.String(), Output: red.String(res.Output), Truncated: res.Truncated,
			TimedOut: res.TimedOut, Duration: res.Duration}
		if res.TimedOut && ctx.Err() != nil && res.Duration < timeout {
			// proc.Run ends a hook on ctx's cancellation as on its timeout;
			// a signal is not a timeout.
			h.TimedOut, h.Interrupted = false, true
			h.Status = "interrupted after " + res.Duration.Round(time.Millisecond).String() + " (" + h.Status + ")"
			return h
		}
		if res.TimedOut {
			h.Status = "timed out after " + timeout.String() + " (" + h.Status + ")"
		}
		h.OK = !res.TimedOut && res.Status.Exited && res.Status.Code == 0
		return h
	}
}
