package policy

import (
	"fmt"
	"github.com/healthctl/healthctl/internal/output"
	"math"
)

// The fleet rule's actions (watch only, SPEC.md §4): a redeploy the fleet
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

// FleetInput is one sweep as the fleet rule sees it.
type FleetInput struct {
	// Actions are the per-target decisions of the sweep's probed targets,
	// in target order (targets skipped or interrupted are not in it).
	Actions []Action
}

// FleetVerdict is the fleet rule's answer for one sweep.
type FleetVerdict struct {
	// Actions are the decisions after the rule: each redeploy kept, or
	// turned into HoldFleet or HoldBudget. Same order as the input.
	Actions []Action
	// Probed, Decisive and Redeploys count the sweep as it came in.
	Probed, Decisive, Redeploys int
	// HeldFleet and HeldBudget count the redeploys held.
	HeldFleet, HeldBudget int
	// Why is one line saying why redeploys were held ("" when none were).
	Why string
}

// Fleet applies the fleet rule to one sweep, after every target's Decide:
// when the decisive failures reach HoldFraction of the probed targets (and
// at least HoldMin were probed) every redeploy becomes HoldFleet; otherwise
// the redeploys past MaxRedeploys, in target order, become HoldBudget. A
// held target keeps its streak (the caller keeps the history from before the
// redeploy), so the next sweep decides it again.
func Fleet(in FleetInput, s FleetSettings) FleetVerdict {
	v := FleetVerdict{Actions: append([]Action(nil), in.Actions...), Probed: len(in.Actions)}
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
	if s.HoldFraction > 0 && v.Probed >= max(1, s.HoldMin) && float64(v.Decisive) >= s.HoldFraction*float64(v.Probed) {
		for i, a := range v.Actions {
			if a == Redeploy {
				v.Actions[i] = HoldFleet
				v.HeldFleet++
			}
		}
		v.Why = fmt.Sprintf("%d of %d targets failed decisively at once (hold at %s, at least %d probed): this looks like the prober's network, not %s; no redeploys",
			v.Decisive, v.Probed, percent(s.HoldFraction), s.HoldMin, output.Plural(v.Decisive, "outage"))
		return v
	}
	if s.MaxRedeploys > 0 && v.Redeploys > s.MaxRedeploys {
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
		v.Why = fmt.Sprintf("%d redeploys decided in one sweep, more than --max-redeploys %d: %d deferred to the next sweep",
			v.Redeploys, s.MaxRedeploys, v.HeldBudget)
	}
	return v
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
