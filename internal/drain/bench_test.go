package drain

import "testing"

// BenchmarkJudge judges a good drain of ~60 polls.
func BenchmarkJudge(b *testing.B) {
	o := good()
	for b.Loop() {
		Judge(o, settings)
	}
}

// BenchmarkLint lints a one-container Deployment.
func BenchmarkLint(b *testing.B) {
	data := []byte(goodDeployment)
	for b.Loop() {
		if _, err := Lint("m.yaml", data, defaults); err != nil {
			b.Fatal(err)
		}
	}
}
