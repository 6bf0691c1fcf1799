package manifest

import "testing"

// BenchmarkLint lints a one-container Deployment.
func BenchmarkLint(b *testing.B) {
	data := []byte(goodDeployment)
	for b.Loop() {
		if _, err := Lint("m.yaml", data, defaults); err != nil {
			b.Fatal(err)
		}
	}
}
