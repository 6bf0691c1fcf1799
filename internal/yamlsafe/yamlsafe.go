// Package yamlsafe bounds what a YAML document costs once its aliases and
// merge keys are followed. yaml.v3 refuses alias bombs when it decodes into
// values, but a merge key (`<<: [*a, *a, …]`) is expanded without a budget
// by whoever resolves it — its own decoder into maps (viper's config), or
// healthctl's targets parser walking nodes — so ten levels of ten merges
// in 654 bytes cost 10^10 steps: minutes, deaf to SIGTERM. The expanded
// size is counted here first, memoised per node, in time linear in the
// file, and a document past its budget is refused before anyone expands it.
package yamlsafe

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Budget is the most nodes a document of n nodes may expand to: room for
// every target of a large fleet merging a defaults mapping (10,000 targets
// of 12 nodes, each merging 40, expand to ~4 times their nodes), far below
// what a bomb reaches.
func Budget(n int) int { return 100_000 + 16*n }

// Error is a document whose aliases and merge keys expand past its budget.
type Error struct {
	Nodes, Expanded, Budget int
}

func (e *Error) Error() string {
	return fmt.Sprintf("aliases and merge keys (<<) expand its %d nodes to more than %d (a YAML bomb?): refused", e.Nodes, e.Budget)
}

// Check counts the nodes of doc with every alias followed (what resolving
// its merge keys or decoding it visits) and returns an *Error when that
// passes Budget(the nodes written). An alias that contains itself counts
// once (yaml.v3 refuses it when decoding).
func Check(doc *yaml.Node) error {
	n, aliases := literal(doc)
	if !aliases {
		// Nothing to follow: the document is as big as it is written
		// (a 10,000-target file is checked without memoising 40,000
		// nodes).
		return nil
	}
	c := counter{memo: map[*yaml.Node]int{}, busy: map[*yaml.Node]bool{}}
	c.budget = Budget(n)
	if got := c.size(doc); got > c.budget {
		return &Error{Nodes: n, Expanded: got, Budget: c.budget}
	}
	return nil
}

// literal counts the nodes as written (an alias is one node) and says
// whether there is any alias.
func literal(n *yaml.Node) (int, bool) {
	if n == nil {
		return 0, false
	}
	if n.Kind == yaml.AliasNode {
		return 1, true
	}
	t, aliases := 1, false
	for _, c := range n.Content {
		m, a := literal(c)
		t, aliases = t+m, aliases || a
	}
	return t, aliases
}

type counter struct {
	memo   map[*yaml.Node]int
	busy   map[*yaml.Node]bool
	budget int
}

// size is the node count of n expanded; it stops adding once past the
// budget (saturating), so no count overflows.
func (c *counter) size(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	if v, ok := c.memo[n]; ok {
		return v
	}
	if c.busy[n] {
		return 1
	}
	c.busy[n] = true
	t := 1
	if n.Kind == yaml.AliasNode {
		t += c.size(n.Alias)
	} else {
		for _, ch := range n.Content {
			if t += c.size(ch); t > c.budget {
				t = c.budget + 1
				break
			}
		}
	}
	c.busy[n] = false
	c.memo[n] = t
	return t
}

// Deref follows an alias to the node it names.
func Deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}
