package policy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/healthctl/healthctl/internal/classify"

	"github.com/healthctl/healthctl/internal/words"
)

// The fleet rule's actions (watch only): a redeploy the fleet
// rule turned down. Like Hold, they leave the target running untouched.
const (
	// HoldFleet is a redeploy of a sweep in which so many targets failed
	// decisively at once that the prober's own network is the likelier cause.
	HoldFleet Action = "hold-fleet"
	// HoldBudget is a redeploy past --max-redeploys in one sweep: deferred to
	// the next sweep.
	HoldBudget Action = "hold-budget"
)

// FleetSettings are the knobs of the fleet rule.
type FleetSettings struct {
	// HoldFraction is the share of the probed targets failing decisively at
	// once that holds every redeploy of the sweep; 0 turns the rule off.
	HoldFraction float64
	// HoldMin is the fewest probed targets for HoldFraction to apply: two of
	// three failing is not a fleet.
	HoldMin int
	// MaxRedeploys caps the redeploys of one sweep; 0 is no cap.
	MaxRedeploys int
}

// DefaultFleetSettings are kube-controller-manager's spirit (stop evicting
// when a zone is mostly down) at watch's scale.
func DefaultFleetSettings() FleetSettings {
	return FleetSettings{HoldFraction: 0.5, HoldMin: 4}
}

// Validate reports the first setting out of range, naming its flag.
func (s FleetSettings) Validate() error {
	switch {
	case math.IsNaN(s.HoldFraction) || s.HoldFraction < 0 || s.HoldFraction > 1:
		return &SettingError{"hold-fraction", fmt.Sprintf("must be between 0 (off) and 1, got %g", s.HoldFraction)}
	case s.HoldMin < 0:
		return &SettingError{"hold-min", fmt.Sprintf("must not be negative, got %d", s.HoldMin)}
	case s.MaxRedeploys < 0:
		return &SettingError{"max-redeploys", fmt.Sprintf("must be 0 (no cap) or at least 1, got %d", s.MaxRedeploys)}
	}
	return nil
}

// Decisive reports whether the policy treated a result as a decisive
// failure: in grace, a blip, or an outage (an escalated timeout or an
// overdue TLS error included).
func Decisive(a Action) bool {
	return a == IgnoreGrace || a == IgnoreBlip || a == Redeploy
}

// wasDecisive is Decisive for a recorded last action, where a redeploy the
// fleet rule held is still a decisive failure.
func wasDecisive(a Action) bool {
	return Decisive(a) || a == HoldFleet || a == HoldBudget
}

// OnsetJudged is the onset recorded for a target whose run of decisive
// failures was already judged on its own — it was redeployed, not held —
// while that run goes on: it joins no later group and no group holds it
// (else a chronic failure one sweep older than a new outage would hold that
// outage for ever in a small fleet).
const OnsetJudged int64 = -2

// Onset is the sweep in which a target's current run of decisive failures
// began, to record after sweep n decided a for it: 0 when a is not decisive
// (the run ended), the recorded prev while the run goes on, n when it starts
// now. Hold (nothing was learned) keeps prev. A target whose last recorded
// action was decisive but whose onset was never recorded (a state written
// before onsets were kept) began failing before any sweep seen here: n-2,
// two sweeps back, so it is never mistaken for part of a new onset.
func Onset(prev int64, prevAction Action, a Action, n int64) int64 {
	switch {
	case a == Hold:
		return prev
	case !Decisive(a):
		return 0
	case prev == OnsetJudged, prevAction == Redeploy:
		// Its onset was judged alone: the fleet rule let its redeploy
		// through, so it was no part of a correlated onset then, and a
		// failure that goes on after its redeploy is its own.
		return OnsetJudged
	case prev > 0:
		return prev
	case wasDecisive(prevAction):
		return max(n-2, -1)
	}
	return n
}

// FleetInput is one sweep as the fleet rule sees it.
type FleetInput struct {
	// Actions are the per-target decisions of the sweep's probed targets,
	// in target order (targets skipped or interrupted are not in it).
	Actions []Action
	// Onsets are, in the same order, the sweeps in which each decisive
	// target's current run of decisive failures began (see Onset); read
	// only for decisive actions. Nil means every decisive failure began in
	// this sweep.
	Onsets []int64
	// Answers are, in the same order, what each target answered, so the
	// why of a hold names it: a fleet that answered HTTP statuses is not
	// the prober's network. Nil: not known (the why does not guess).
	Answers []Answer
}

// Answer is what one probed target answered, as the fleet rule's why
// names it.
type Answer struct {
	Outcome classify.Outcome
	Reason  classify.Reason
	// HTTPStatus is the status of the answer (0: no HTTP answer came).
	HTTPStatus int
}

// FleetVerdict is the fleet rule's answer for one sweep.
type FleetVerdict struct {
	// Actions are the decisions after the rule: each redeploy kept, or
	// turned into HoldFleet or HoldBudget. Same order as the input.
	Actions []Action
	// Probed, Decisive and Redeploys count the sweep as it came in.
	Probed, Decisive, Redeploys int
	// Together is the largest group of targets that turned decisive
	// together with a held redeploy (0 when none was held by the fleet
	// rule).
	Together int
	// HeldFleet and HeldBudget count the redeploys held.
	HeldFleet, HeldBudget int
	// Groups are the groups the fleet rule held, each with its own why, in
	// the order of their first held target. Several can be held in one
	// sweep (a group refused since sweep 3, another answering 503 since
	// sweep 10): each held target carries its own group's why.
	Groups []FleetGroup
	// Group is, for each input (same order), the index in Groups of the
	// group that held it; -1 for a target the fleet rule did not hold. Nil
	// when no group was held.
	Group []int
	// Why is one line saying why redeploys were held ("" when none were):
	// FleetWhy and BudgetWhy joined.
	Why string
	// FleetWhy is every held group's why, joined by "; " (one group: its
	// why); BudgetWhy says why the HoldBudget redeploys were deferred.
	FleetWhy, BudgetWhy string
}

// FleetGroup is one group of targets whose decisive failures began
// together (within one sweep of each other) that the fleet rule held.
type FleetGroup struct {
	// FirstOnset and LastOnset are the sweeps in which its members' runs of
	// failures began.
	FirstOnset, LastOnset int64
	// Targets is how many probed targets are in it (every decisive one, in
	// grace, a blip or a redeploy); Held how many of its redeploys were held.
	Targets, Held int
	// Why says why it was held: its size and what its members answered.
	Why string
}

// WhyFor is the line saying why a redeploy became a (HoldFleet or
// HoldBudget): for HoldFleet every held group's (see WhyAt for one
// target's).
func (v FleetVerdict) WhyFor(a Action) string {
	if a == HoldFleet {
		return v.FleetWhy
	}
	return v.BudgetWhy
}

// WhyAt is the why of the rule's action for input i: its own group's for
// a HoldFleet, the budget's for a HoldBudget, "" otherwise.
func (v FleetVerdict) WhyAt(i int) string {
	switch v.Actions[i] {
	case HoldFleet:
		return v.Groups[v.Group[i]].Why
	case HoldBudget:
		return v.BudgetWhy
	}
	return ""
}

// Fleet applies the fleet rule to one sweep, after every target's Decide.
// It looks for a correlated onset, not at how much of the fleet is failing:
// a redeploy's group is every probed target failing decisively (in grace, a
// blip, a redeploy — recover or not) whose current run of failures began
// within one sweep of this one's; a target that was failing before (a
// chronic failure) is not in it. When the group reaches HoldFraction of the
// probed targets (and at least HoldMin were probed) the redeploy becomes
// HoldFleet: the prober's own network is the likelier cause. Then the
// redeploys past MaxRedeploys, in target order, become HoldBudget. A held
// target keeps its streak (the caller keeps the history from before the
// redeploy), so the next sweep decides it again; its onset does not move,
// so a fleet that failed at once stays held while it fails.
//
// The held redeploys are told apart by group: held onsets whose groups
// share members are one group (its members: every decisive target whose
// onset is within one sweep of a held one), and each group's why is said
// from its own members alone.
func Fleet(in FleetInput, s FleetSettings) FleetVerdict {
	v := FleetVerdict{Actions: append([]Action(nil), in.Actions...), Probed: len(in.Actions)}
	onset := func(i int) int64 {
		if i < len(in.Onsets) {
			return in.Onsets[i]
		}
		return 0
	}
	for _, a := range in.Actions {
		if Decisive(a) {
			v.Decisive++
		}
		if a == Redeploy {
			v.Redeploys++
		}
	}
	if v.Redeploys == 0 {
		return v
	}
	if s.HoldFraction > 0 && v.Probed >= max(1, s.HoldMin) {
		// The decisive targets by the sweep their run began in, counted
		// once: a redeploy's group is those within one sweep of its own
		// (counted per redeploy, 100,000 failing at once took ~20 s).
		byOnset := map[int64]int{}
		for j, b := range in.Actions {
			if Decisive(b) && onset(j) != OnsetJudged {
				byOnset[onset(j)]++
			}
		}
		heldOnsets := map[int64]bool{}
		for i, a := range in.Actions {
			if a != Redeploy || onset(i) == OnsetJudged {
				continue
			}
			o := onset(i)
			group := byOnset[o-1] + byOnset[o] + byOnset[o+1]
			if float64(group) >= s.HoldFraction*float64(v.Probed) {
				v.Actions[i] = HoldFleet
				v.HeldFleet++
				heldOnsets[o] = true
			}
		}
		if v.HeldFleet > 0 {
			v.groups(in, heldOnsets, byOnset, onset, s)
		}
	}
	if left := v.Redeploys - v.HeldFleet; s.MaxRedeploys > 0 && left > s.MaxRedeploys {
		kept := 0
		for i, a := range v.Actions {
			if a != Redeploy {
				continue
			}
			if kept < s.MaxRedeploys {
				kept++
				continue
			}
			v.Actions[i] = HoldBudget
			v.HeldBudget++
		}
		v.BudgetWhy = fmt.Sprintf("%d redeploys decided in one sweep, more than --max-redeploys %d: %d deferred to the next sweep",
			left, s.MaxRedeploys, v.HeldBudget)
	}
	switch {
	case v.FleetWhy != "" && v.BudgetWhy != "":
		v.Why = v.FleetWhy + "; " + v.BudgetWhy
	case v.FleetWhy != "":
		v.Why = v.FleetWhy
	default:
		v.Why = v.BudgetWhy
	}
	return v
}

// answerKind is what one member of a group answered, as its why counts it.
type answerKind struct {
	status          int
	outcome, reason string
}

func (k answerKind) String() string {
	if k.status != 0 {
		return fmt.Sprintf("HTTP %d", k.status)
	}
	return strings.TrimSpace(k.outcome + " " + k.reason)
}

// groupCount is what one held group's members answered.
type groupCount struct {
	members, answered int
	kinds             map[answerKind]int
}

// groups sorts the held onsets into groups — two held onsets whose groups
// share a member are one group — and says each group's why from its own
// members: one pass over the sweep, whatever the number of groups.
func (v *FleetVerdict) groups(in FleetInput, held map[int64]bool, byOnset map[int64]int, onset func(int) int64, s FleetSettings) {
	onsets := make([]int64, 0, len(held))
	for o := range held {
		onsets = append(onsets, o)
	}
	slices.Sort(onsets)
	// Windows [o-1, o+1] of held onsets o < p overlap in a member when
	// p-o <= 1, or p-o == 2 with a target whose run began at o+1.
	var ranges [][2]int64
	for _, o := range onsets {
		if n := len(ranges); n > 0 {
			last := ranges[n-1][1]
			if o-last <= 1 || (o-last == 2 && byOnset[last+1] > 0) {
				ranges[n-1][1] = o
				continue
			}
		}
		ranges = append(ranges, [2]int64{o, o})
	}
	rangeOf := func(o int64) int {
		// The ranges are sorted and their members apart: the first whose
		// window ends at or after o is the only one that can hold it.
		r, _ := slices.BinarySearchFunc(ranges, o, func(x [2]int64, o int64) int { return cmp.Compare(x[1]+1, o) })
		if r < len(ranges) && o >= ranges[r][0]-1 {
			return r
		}
		return -1
	}
	counts := make([]groupCount, len(ranges))
	order := make([]int, len(ranges)) // range -> index in v.Groups
	for r := range order {
		order[r] = -1
	}
	v.Group = make([]int, len(in.Actions))
	for j, b := range in.Actions {
		v.Group[j] = -1
		if !Decisive(b) || onset(j) == OnsetJudged {
			continue
		}
		r := rangeOf(onset(j))
		if r < 0 {
			continue
		}
		c := &counts[r]
		c.members++
		if len(in.Answers) == len(in.Actions) {
			a := in.Answers[j]
			k := answerKind{status: a.HTTPStatus}
			if a.HTTPStatus != 0 {
				c.answered++
			} else {
				k.outcome, k.reason = string(a.Outcome), string(a.Reason)
			}
			if c.kinds == nil {
				c.kinds = map[answerKind]int{}
			}
			c.kinds[k]++
		}
		if v.Actions[j] != HoldFleet {
			continue
		}
		if order[r] < 0 {
			order[r] = len(v.Groups)
			v.Groups = append(v.Groups, FleetGroup{FirstOnset: ranges[r][0], LastOnset: ranges[r][1]})
		}
		v.Group[j] = order[r]
		v.Groups[order[r]].Held++
	}
	whys := make([]string, 0, len(v.Groups))
	for r, g := range order {
		if g < 0 {
			continue
		}
		c := counts[r]
		v.Groups[g].Targets = c.members
		v.Groups[g].Why = groupWhy(c, len(in.Answers) == len(in.Actions), v.Probed, s)
		v.Together = max(v.Together, c.members)
	}
	for _, g := range v.Groups {
		whys = append(whys, g.Why)
	}
	v.FleetWhy = strings.Join(whys, "; ")
}

// groupWhy says why the fleet rule held one group: how many failed at
// once and, when the answers are known, what the group answered. Only a
// group none of which answered HTTP reads as the prober's network; one
// whose targets answered statuses was reached, so the cause is one they
// share (a dependency, a release).
func groupWhy(c groupCount, known bool, probed int, s FleetSettings) string {
	head := fmt.Sprintf("%d of %s failed decisively at once (hold at %s, at least %d probed)",
		c.members, words.Plural(probed, "target"), percent(s.HoldFraction), s.HoldMin)
	tail := fmt.Sprintf("not %s; no redeploys", words.Plural(c.members, "outage"))
	if !known {
		return head + ": this looks like the prober's network, " + tail
	}
	kinds := make([]answerKind, 0, len(c.kinds))
	for k := range c.kinds {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b answerKind) int {
		if c.kinds[a] != c.kinds[b] {
			return c.kinds[b] - c.kinds[a]
		}
		return strings.Compare(a.String(), b.String())
	})
	parts := make([]string, 0, 4)
	for i, k := range kinds {
		if i == 3 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%d %s", c.kinds[k], k))
	}
	what := strings.Join(parts, ", ")
	switch c.answered {
	case 0:
		return head + ", none with an HTTP answer (" + what + "): this looks like the prober's network, " + tail
	case c.members:
		return head + ", all answering HTTP (" + what + "): the prober reaches them, so a cause they share (a dependency, a release), " + tail
	}
	return fmt.Sprintf("%s, %d of them answering HTTP (%s): the prober reaches those, so a cause they share, %s", head, c.answered, what, tail)
}

// HeldWhy is the why of a redeploy the fleet rule held: the redeploy's own
// why, then the rule's.
func HeldWhy(a Action, redeployWhy string, fleetWhy string) string {
	switch a {
	case HoldFleet:
		return redeployWhy + ", but " + fleetWhy + ": hold (the streak keeps counting)"
	case HoldBudget:
		return redeployWhy + ", but " + fleetWhy + ": deferred to the next sweep (the streak keeps counting)"
	}
	return redeployWhy
}

func percent(f float64) string {
	return fmt.Sprintf("%g%%", math.Round(f*1000)/10)
}

// HeldHistory is the history to carry when the fleet rule holds the
// redeploy Decide made of in: the streaks keep counting (the failure counts
// as one more in a row past grace) and the grace window does not restart,
// so the next sweep decides the target again.
func HeldHistory(in Input) History {
	in.Settings.FailureThreshold = math.MaxInt
	_, h := Decide(in)
	return h
}
