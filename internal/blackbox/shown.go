package blackbox

import (
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/healthctl/healthctl/internal/redact"
)

// A module as /config shows it.

// secretField says k is a module field /config masks.
func secretField(k string) bool {
	return k == "password" || k == "bearer_token" || k == "client_secret"
}

// shownModule is a module's YAML as /config shows it: as the file has
// it, secrets (password:, bearer_token:, the values of the headers the
// module's redactor keeps secret: Authorization, Cookie, … and every
// --secret-header) as <secret>.
func shownModule(v *yaml.Node, secretHeader func(string) bool) string {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(copyNode(v, false, secretHeader)); err != nil {
		return ""
	}
	enc.Close()
	return b.String()
}

func copyNode(n *yaml.Node, mask bool, secretHeader func(string) bool) *yaml.Node {
	n = deref(n)
	c := *n
	c.Anchor, c.Alias = "", nil
	if mask && n.Kind == yaml.ScalarNode {
		c.Value, c.Tag, c.Style = "<secret>", "!!str", 0
		return &c
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		m := mask
		if n.Kind == yaml.MappingNode && i%2 == 1 {
			k := strings.ToLower(n.Content[i-1].Value)
			m = m || secretField(k) || secretHeader(k)
			if k == "proxy_url" && !m && deref(e).Kind == yaml.ScalarNode {
				// The proxy's password masked where it stands.
				u := *deref(e)
				u.Anchor, u.Alias, u.Value = "", nil, redact.NewRedactor(nil, nil).RawURL(u.Value)
				c.Content[i] = &u
				continue
			}
		}
		c.Content[i] = copyNode(e, m, secretHeader)
	}
	return &c
}
