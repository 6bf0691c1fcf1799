package judge

import "testing"

// BenchmarkJudge judges a good drain of ~60 polls.
func BenchmarkJudge(b *testing.B) {
	o := good()
	for b.Loop() {
		Judge(o, settings)
	}
}
