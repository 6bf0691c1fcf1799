package yamlsafe

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// bomb is a merge-key bomb: level i merges level i-1 ten times.
func bomb(levels int) string {
	var b strings.Builder
	b.WriteString("targets:\n  - &m0 {name: a0, url: 'http://h/'}\n")
	for i := 1; i <= levels; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*m%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "  - &m%d {<<: [%s], name: a%d}\n", i, refs, i)
	}
	return b.String()
}

func check(t *testing.T, src string) error {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return Check(&doc)
}

func TestCheck(t *testing.T) {
	start := time.Now()
	err := check(t, bomb(12))
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("Check(bomb) = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Check(bomb) took %v", d)
	}
	if err := check(t, bomb(3)); err != nil {
		t.Errorf("Check(3 levels: 1,111 nodes merged) = %v", err)
	}
	// A large fleet merging its defaults stays inside the budget.
	var b strings.Builder
	b.WriteString("common: &c {connect_timeout: 1s, read_timeout: 2s, expect_status: 2xx, headers: [a, b, c]}\ntargets:\n")
	for i := range 10000 {
		fmt.Fprintf(&b, "  - {<<: *c, name: t%d, url: 'http://h/%d'}\n", i, i)
	}
	if err := check(t, b.String()); err != nil {
		t.Errorf("Check(10,000 targets merging defaults) = %v", err)
	}
}
