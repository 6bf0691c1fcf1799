// Package metrics writes watch's Prometheus text exposition: blackbox
// exporter's probe_* names plus healthctl_* ones, escaped, with no raw
// error text or secrets in any label.
package metrics

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/grpchealth"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/policy"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/state"
	"github.com/healthctl/healthctl/internal/watch"
)

// This file writes the Prometheus text exposition format (version 0.0.4) by
// hand: every Prometheus library costs start-up time that every command,
// probe included, pays, past the start-up budget (docs/benchmarks.md,
// "Summary"); the format is small, and metrics_test.go checks the output with
// prometheus/common/expfmt's parser (and promtool when installed), which are
// test-only and never linked into healthctl.

// Input is what the metrics describe: the latest probed item of each
// target (a target never probed has Target set and a zero Result), the
// state (counters that survive short-lived runs) and the last sweep.
type Input struct {
	Latest []watch.Item
	State  *state.File
	Sweep  *watch.Sweep
	// Shard is --shard's K/N ("" for none: the label says "all"). The
	// sweep-level series carry it, so N shards writing into one textfile
	// directory never collide (node_exporter drops colliding series).
	Shard string
}

// stateFacts are what a target's state entry shows in the metrics.
type stateFacts struct {
	streak, redeploys, skipped, heldFleet, heldBudget int64
	// lastRedeploy is in unix milliseconds, 0 for none.
	lastRedeploy                 int64
	recoveryPending, hookPending bool
}

func factsOf(e state.Entry) stateFacts {
	f := stateFacts{streak: int64(e.Streak), redeploys: e.Redeploys, skipped: e.Skipped, heldFleet: e.HeldFleet,
		heldBudget: e.HeldBudget, recoveryPending: e.RecoveryPending, hookPending: e.HookPending}
	if !e.LastRedeploy.IsZero() {
		f.lastRedeploy = e.LastRedeploy.UnixMilli()
	}
	return f
}

// blackboxPhase maps a healthctl phase to blackbox_exporter's phase label of
// probe_http_duration_seconds.
var blackboxPhase = []struct {
	ph    probe.Phase
	label string
}{
	{probe.PhaseDNS, "resolve"}, {probe.PhaseConnect, "connect"}, {probe.PhaseTLS, "tls"},
	{probe.PhaseTTFB, "processing"}, {probe.PhaseTransfer, "transfer"},
}

// Write writes the exposition: blackbox_exporter's probe_* names
// (so existing dashboards work) with a target label holding the target's
// name, and healthctl_* for the decision, streaks, counters and the sweep.
// Labels never carry URLs, error text or header values.
func Write(w io.Writer, in Input) error {
	b := bufio.NewWriter(w)
	m := &metricWriter{b: b}
	// Each target's label, escaped once for its ~24 series.
	labels := make([]string, len(in.Latest))
	probed := make([]probedItem, 0, len(in.Latest))
	for i := range in.Latest {
		labels[i] = targetLabel(in.Latest[i].Endpoint.Name)
		if in.Latest[i].Result.Outcome != "" {
			probed = append(probed, probedItem{&in.Latest[i], labels[i]})
		}
	}
	m.family("probe_success", "gauge", "Whether the last probe of the target passed (1) or not (0).")
	for _, it := range probed {
		m.targetSample("probe_success", boolf(it.Result.Outcome == classify.Pass), it.label)
	}
	m.family("probe_duration_seconds", "gauge", "How long the last probe took, in seconds.")
	for _, it := range probed {
		m.targetSample("probe_duration_seconds", it.Result.Timings.Of(probe.PhaseTotal).Seconds(), it.label)
	}
	m.family("probe_http_status_code", "gauge", "The HTTP status of the last probe (0: no response).")
	for _, it := range probed {
		m.targetSample("probe_http_status_code", float64(it.Result.HTTPStatus), it.label)
	}
	m.family("probe_http_duration_seconds", "gauge", "Duration of the last probe's phases, in seconds (phases reached only).")
	for _, it := range probed {
		for _, p := range blackboxPhase {
			if d, ok := it.Result.Timings.Get(p.ph); ok {
				m.targetSample("probe_http_duration_seconds", d.Seconds(), it.label, "phase", p.label)
			}
		}
	}
	m.family("probe_ssl_earliest_cert_expiry", "gauge", "Earliest expiry of the presented certificates, unix seconds.")
	for _, it := range probed {
		if earliest, ok := earliestExpiry(&it.Result); ok {
			m.targetSample("probe_ssl_earliest_cert_expiry", float64(earliest.Unix()), it.label)
		}
	}
	m.family("healthctl_probe_result", "gauge", "The last probe's outcome and reason (always 1; reasons are a closed set).")
	for _, it := range probed {
		m.targetSample("healthctl_probe_result", 1, it.label, "outcome", string(it.Result.Outcome), "reason", string(it.Result.Reason))
	}
	m.family("healthctl_grpc_status", "gauge", "A gRPC target's last health answer: 1 for the serving status it answered, 0 for the others (no sample without an answer).")
	for _, it := range probed {
		if g := grpchealth.InfoOf(it.Result.Answer); g != nil && g.Status != "" {
			for _, s := range grpcStatuses {
				m.targetSample("healthctl_grpc_status", boolf(g.Status == s), it.label, "status", s)
			}
		}
	}
	m.family("healthctl_grpc_status_code", "gauge", "The grpc-status code of a gRPC target's last health call (0 OK, 12 UNIMPLEMENTED, …; no sample when none arrived).")
	for _, it := range probed {
		if g := grpchealth.InfoOf(it.Result.Answer); g != nil && g.Code != nil {
			m.targetSample("healthctl_grpc_status_code", float64(*g.Code), it.label)
		}
	}
	m.family("healthctl_decision", "gauge", "The policy's last decision for the target: 1 for the decision taken, 0 for the others.")
	for _, it := range probed {
		for _, a := range actions {
			m.targetSample("healthctl_decision", boolf(it.Decision.Action == a), it.label, "decision", string(a))
		}
	}
	// Each target's state, looked up once for its series: the facts the
	// series show, not the whole entry (100,000 entries copied were 24 MB
	// at a sweep's end, its peak).
	entries := make([]stateFacts, len(in.Latest))
	if in.State != nil {
		for i := range in.Latest {
			entries[i] = factsOf(in.State.Targets[in.Latest[i].Endpoint.Name])
		}
	}
	// The per-target facts kept in the state, every configured target.
	for _, f := range []struct {
		name, typ, help string
		value           func(*stateFacts) float64
	}{
		{"healthctl_streak", "gauge", "Decisive failures in a row past grace.",
			func(t *stateFacts) float64 { return float64(t.streak) }},
		{"healthctl_recovery_pending", "gauge", "1 after a redeploy decision until the target passes again.",
			func(t *stateFacts) float64 { return boolf(t.recoveryPending) }},
		{"healthctl_redeploys_total", "counter", "Redeploy decisions made for the target (kept in the state file across runs).",
			func(t *stateFacts) float64 { return float64(t.redeploys) }},
		{"healthctl_skipped_probes_total", "counter", "Turns skipped because the target's previous probe was still running.",
			func(t *stateFacts) float64 { return float64(t.skipped) }},
		{"healthctl_redeploy_hook_pending", "gauge", "1 while the target's --on-redeploy has started and not reported its end (a killed run leaves it set).",
			func(t *stateFacts) float64 { return boolf(t.hookPending) }},
	} {
		m.family(f.name, f.typ, f.help)
		for i := range in.Latest {
			m.targetSample(f.name, f.value(&entries[i]), labels[i])
		}
	}
	m.family("healthctl_last_redeploy_timestamp_seconds", "gauge", "When the target's last redeploy decision (not held) was made, unix seconds (kept in the state file; no sample before the first): alert on time() minus it.")
	for i := range in.Latest {
		if t := &entries[i]; t.lastRedeploy != 0 {
			m.targetSample("healthctl_last_redeploy_timestamp_seconds", float64(t.lastRedeploy)/1000, labels[i])
		}
	}
	// Whether a redeploy decision of the target runs --on-redeploy: an
	// alert on redeploys leaves recover: false targets out with
	// "unless on(target) healthctl_target_recover == 0".
	m.family("healthctl_target_recover", "gauge", "1 when the target's redeploy decisions run --on-redeploy (recover: true, the default), 0 for recover: false (decided, never acted on).")
	for i := range in.Latest {
		t := in.Latest[i].Endpoint
		m.targetSample("healthctl_target_recover", boolf(t.Recover), labels[i])
	}
	m.family("healthctl_redeploys_held_total", "counter", "Redeploy decisions the fleet rule held: rule=\"fleet\" (the fleet failed at once), rule=\"budget\" (past --max-redeploys); kept in the state file.")
	for i := range in.Latest {
		t := &entries[i]
		m.targetSample("healthctl_redeploys_held_total", float64(t.heldFleet), labels[i], "rule", "fleet")
		m.targetSample("healthctl_redeploys_held_total", float64(t.heldBudget), labels[i], "rule", "budget")
	}
	shard := in.Shard
	if shard == "" {
		shard = "all"
	}
	if s := in.Sweep; s != nil {
		m.family("healthctl_sweep_duration_seconds", "gauge", "How long the last sweep took, in seconds.")
		m.sample("healthctl_sweep_duration_seconds", s.Duration.Seconds(), "shard", shard)
		m.family("healthctl_sweep_timestamp_seconds", "gauge", "When the last sweep started, unix seconds (alert when it gets old).")
		m.sample("healthctl_sweep_timestamp_seconds", float64(s.Started.UnixMilli())/1000, "shard", shard)
		m.family("healthctl_sweep_targets", "gauge", "Targets in the last sweep (after --shard).")
		m.sample("healthctl_sweep_targets", float64(s.Targets), "shard", shard)
	}
	if in.State != nil {
		m.family("healthctl_sweeps_total", "counter", "Sweeps run (kept in the state file across runs).")
		m.sample("healthctl_sweeps_total", float64(in.State.Sweeps), "shard", shard)
	}
	return b.Flush()
}

// actions are the policy's decisions, in the policy's rule order (rule 0 first).
// The fleet rule's holds come last.
var actions = []policy.Action{policy.Hold, policy.Stay, policy.PendingTLS, policy.IgnoreTimeout, policy.IgnoreGrace, policy.IgnoreBlip, policy.Redeploy,
	policy.HoldFleet, policy.HoldBudget}

// probedItem is a target's latest item that was probed, with its label.
type probedItem struct {
	*watch.Item
	label string
}

type metricWriter struct {
	b *bufio.Writer
	// num is strconv's scratch for a sample's value.
	num []byte
}

func (m *metricWriter) family(name, typ, help string) {
	m.b.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n")
}

// sample writes name{k="v",...} value; labels come in name, value pairs.
func (m *metricWriter) sample(name string, v float64, labels ...string) {
	m.b.WriteString(name)
	if len(labels) < 2 {
		m.b.WriteByte(' ')
		m.value(v)
		return
	}
	m.b.WriteByte('{')
	m.pair(labels[0], labels[1])
	m.more(labels[2:])
	m.b.WriteString("} ")
	m.value(v)
}

// targetSample is sample for a target's series: target is the
// `{target="..."` opening, escaped once for all its series (targetLabel);
// more are further label pairs.
func (m *metricWriter) targetSample(name string, v float64, target string, more ...string) {
	m.b.WriteString(name)
	m.b.WriteString(target)
	m.more(more)
	m.b.WriteString("} ")
	m.value(v)
}

// more writes label pairs after a first one: ,k="v" each.
func (m *metricWriter) more(labels []string) {
	for i := 0; i+1 < len(labels); i += 2 {
		m.b.WriteByte(',')
		m.pair(labels[i], labels[i+1])
	}
}

// pair writes k="v", v escaped.
func (m *metricWriter) pair(k, v string) {
	m.b.WriteString(k)
	m.b.WriteString(`="`)
	m.b.WriteString(EscapeLabel(v))
	m.b.WriteByte('"')
}

// value ends a sample line with v as strconv's shortest 'g' text.
func (m *metricWriter) value(v float64) {
	switch v {
	case 0:
		m.b.WriteString("0\n")
	case 1:
		m.b.WriteString("1\n")
	default:
		m.num = strconv.AppendFloat(m.num[:0], v, 'g', -1, 64)
		m.num = append(m.num, '\n')
		m.b.Write(m.num)
	}
}

// targetLabel is the opening of a target's label set, `{target="name"`,
// its name escaped.
func targetLabel(name string) string {
	return `{target="` + EscapeLabel(name) + `"`
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// EscapeLabel escapes a label value as the text format wants: backslash,
// double quote and newline. Invalid UTF-8 becomes U+FFFD (the format is
// UTF-8), as in the JSON and the state file. The format has no escape for
// other control characters, so a value never carries them raw: ESC, BEL,
// DEL, C1 controls (CSI), bidi overrides and the BOM are written as the
// text \x1b, \u009b, \u202e (output.Untrusted), which is what a person
// reading the file or a dashboard would be shown anyway.
func EscapeLabel(s string) string {
	if plainLabel(s) {
		return s
	}
	return escapeLabel(s)
}

// escapeLabel is EscapeLabel without its shortcut for plain text.
func escapeLabel(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.Contains(s, "\n") {
		// Newline has the format's own escape: keep it a newline.
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = output.Untrusted(l)
		}
		s = strings.Join(lines, "\n")
	} else {
		s = output.Untrusted(s)
	}
	return labelEscaper.Replace(s)
}

// plainLabel reports whether s is printable ASCII with neither backslash
// nor double quote: EscapeLabel leaves it as it is.
func plainLabel(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' || c == '"' {
			return false
		}
	}
	return true
}

// grpcStatuses are the serving statuses of grpc.health.v1, in their order.
var grpcStatuses = []string{"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
