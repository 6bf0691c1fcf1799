package targetsfile

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/target"
)

// target reads one entry of targets:, the defaults applied.
func (p *targetsParser) target(e *yaml.Node) (FileEntry, error) {
	// The defaults' map itself until the entry sets a key of its own
	// (a map an entry was ~400 bytes of 100,000 entries' peak).
	t := FileEntry{Line: e.Line, Recover: p.defaultRecover, Probe: p.defaults}
	if e.Kind != yaml.MappingNode {
		return t, p.fail(e.Line, "", "a target must be a mapping with name: and url:")
	}
	epairs, err := pairs(e)
	if err != nil {
		return t, p.fail(e.Line, "", "%v", err)
	}
	// The name first, so every other error can name the target.
	if t.Name, err = p.name(e, epairs); err != nil {
		return t, err
	}
	for i, kv := range epairs {
		k, v := kv[0], kv[1]
		// A key given twice, by a look back: an entry has a handful
		// (a set of them was a map a target).
		for _, before := range epairs[:i] {
			if before[0].Value == k.Value {
				return t, p.fail(k.Line, t.Name, "%s: given twice", k.Value)
			}
		}
		if err := p.targetKey(&t, k, v); err != nil {
			return t, err
		}
	}
	return t, nil
}

// name reads an entry's name: and checks that it is new.
func (p *targetsParser) name(e *yaml.Node, epairs [][2]*yaml.Node) (string, error) {
	name, hasName := "", false
	for _, kv := range epairs {
		if kv[0].Value == "name" {
			nv := kv[1]
			if nv.Kind != yaml.ScalarNode || nv.Tag == "!!null" || nv.Value == "" {
				return "", p.fail(nv.Line, "", "name: want a non-empty string")
			}
			name, hasName = nv.Value, true
		}
	}
	if !hasName {
		return "", p.fail(e.Line, "", "a target without name: (names are identity in the state and the metrics)")
	}
	if prev, dup := p.names[name]; dup {
		return "", p.fail(e.Line, name, "duplicate name (first at line %d)", prev)
	}
	p.names[name] = e.Line
	return name, nil
}

// targetKey reads one key of an entry into t.
func (p *targetsParser) targetKey(t *FileEntry, k, v *yaml.Node) error {
	switch k.Value {
	case "name":
	case "url":
		s, err := stringValue(v)
		if err != nil {
			return p.fail(v.Line, t.Name, "url: %v", err)
		}
		t.URL, t.URLLine = s, v.Line
	case "started_at":
		s, err := stringValue(v)
		if err != nil {
			return p.fail(v.Line, t.Name, "started_at: %v", err)
		}
		// The sanity check first: it says "milliseconds?" more plainly
		// than the parser's year range does.
		if err := saneDigits(s); err != nil {
			return p.fail(v.Line, t.Name, "started_at: %q: %v", s, err)
		}
		if t.StartedAt, err = target.ParseTime(s); err != nil {
			return p.fail(v.Line, t.Name, "started_at: %q: %v", s, err)
		}
		if err := saneStart(s, t.StartedAt, now()); err != nil {
			return p.fail(v.Line, t.Name, "started_at: %q: %v", s, err)
		}
	case "recover":
		b, err := boolValue(v)
		if err != nil {
			return p.fail(v.Line, t.Name, "recover: %v", err)
		}
		t.Recover = b
	default:
		val, err := probeValue(k, v)
		if err != nil {
			return p.fail(k.Line, t.Name, "%v", err)
		}
		if !t.ownProbe {
			t.Probe = make(map[string]Value, len(p.defaults)+1)
			maps.Copy(t.Probe, p.defaults)
			t.ownProbe = true
		}
		t.Probe[k.Value] = val
	}
	return nil
}

// now is the clock that judges a started_at "far in the future".
var now = time.Now

// FutureSlack is how far in the future a started_at may be (clock skew
// between the deploying machine and this one); past it, it is an error: the
// target would sit inside its grace window until then.
const FutureSlack = time.Hour

// saneStart checks a started_at where it enters, so one target can never
// make the state unsavable (time.Time's JSON stops at year 9999) nor hide
// inside a grace window that never ends.
func saneStart(raw string, t, now time.Time) error {
	if err := saneDigits(raw); err != nil {
		return err
	}
	switch {
	case t.Year() > 9999:
		return fmt.Errorf("year %d: want a year up to 9999", t.Year())
	case t.Year() < 1970:
		return fmt.Errorf("year %d: before 1970", t.Year())
	case t.After(now.Add(FutureSlack)):
		ahead := t.Sub(now).Round(time.Minute).String()
		if d := t.Sub(now); d > 48*time.Hour {
			ahead = fmt.Sprintf("%d days", d/(24*time.Hour))
		}
		return fmt.Errorf("%s is %s in the future: the target would stay inside its grace window until then",
			t.UTC().Format(time.RFC3339), ahead)
	}
	return nil
}

// saneDigits refuses unix times of 12 digits or more: milliseconds (or
// smaller units) where seconds are meant.
func saneDigits(raw string) error {
	raw = strings.TrimSpace(raw)
	if raw != "" && strings.Trim(raw, "0123456789") == "" && len(raw) >= 12 {
		return fmt.Errorf("%d digits: milliseconds or smaller units? want unix seconds (10 digits today)", len(raw))
	}
	return nil
}
