package watch

import "slices"

// Latest is each target's last probed item, in the order of the targets of
// the last Update (the caller serialises the updates, as watch's reports
// are), for the metrics of a long-running watch: the items of the last
// sweep that probed every target, else updated in place (a copy of every
// item a sweep, a map of them and a slice made from it, was ~1 KB a target
// more between sweeps). The zero Latest is empty.
type Latest struct {
	latest   []Item
	latestOf []*Endpoint
	// latestAt is a target's index by name.
	latestAt map[string]int
}

// Update takes sweep s's items into the latest, for targets, the targets
// of now (a reload may have replaced them since s began), and returns each
// target's latest item, in targets' order: a target kept keeps its last
// item, a new one starts unprobed.
func (r *Latest) Update(s *Sweep, targets []*Endpoint) []Item {
	switch {
	case r.whole(s, targets):
		// Every target of now probed in this sweep: its items are
		// the latest themselves, not copied into the last ones (a
		// second ~600 bytes a target live as the sweep is
		// published: 62 MB at 100,000).
		if !slices.Equal(targets, r.latestOf) {
			at := make(map[string]int, len(targets))
			for i, t := range targets {
				at[t.Name] = i
			}
			r.latestOf, r.latestAt = targets, at
		}
		r.latest = s.Items
	default:
		if !slices.Equal(targets, r.latestOf) {
			next := make([]Item, len(targets))
			at := make(map[string]int, len(targets))
			for i, t := range targets {
				at[t.Name] = i
				if j, ok := r.latestAt[t.Name]; ok {
					next[i] = r.latest[j]
				} else {
					next[i] = Item{Endpoint: t}
				}
			}
			r.latest, r.latestOf, r.latestAt = next, targets, at
		}
		// In place: r.latest may be an earlier sweep's items, which
		// nothing else holds once reported.
		for i := range s.Items {
			if it := &s.Items[i]; !it.Skipped && !it.Interrupted {
				if j, ok := r.latestAt[it.Endpoint.Name]; ok {
					r.latest[j] = *it
				}
			}
		}
	}
	return r.latest
}

// whole reports whether sweep s probed every one of targets, in their
// order (none skipped, none interrupted, no reload since it began).
func (r *Latest) whole(s *Sweep, targets []*Endpoint) bool {
	if len(s.Items) != len(targets) {
		return false
	}
	for i := range s.Items {
		if it := &s.Items[i]; it.Skipped || it.Interrupted || it.Endpoint != targets[i] {
			return false
		}
	}
	return true
}
