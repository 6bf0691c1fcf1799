package output

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendFloatAsEncodingJSON holds AppendFloat to encoding/json's own
// writing of a float64: every count of thousandths up to 300,000 (what
// JSONMillis makes of durations to 5 minutes), random ones up to 1e15 and
// below zero, durations through JSONMillis, and random floats of every
// magnitude (the thousandths' shortcut must not take those it does not
// fit).
func TestAppendFloatAsEncodingJSON(t *testing.T) {
	check := func(f float64) {
		t.Helper()
		want, err := json.Marshal(f)
		if err != nil {
			if _, ok := AppendFloat(nil, f); ok {
				t.Fatalf("%v: encoding/json refuses it (%v), AppendFloat did not", f, err)
			}
			return
		}
		got, ok := AppendFloat(nil, f)
		if ok && string(got) != string(want) {
			t.Fatalf("%v (%b): AppendFloat %q, encoding/json %q", f, math.Float64bits(f), got, want)
		}
	}
	for n := range 300000 {
		check(float64(n) / 1000)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		n := r.Int64N(1e15)
		check(float64(n) / 1000)
		check(-float64(n) / 1000)
		check(JSONMillis(time.Duration(r.Int64N(int64(24 * time.Hour)))))
		check(r.Float64() * math.Pow(10, float64(r.IntN(40)-12)))
		check(math.Float64frombits(r.Uint64()))
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1e-6, 1e-7, 0.0005, 0.001, 0.0015, 999999999999.999, 1e12, 1e12 + 0.001,
		1e15, 1e21, 1e21 - 1e5, 123.4565, 0.1 + 0.2, math.MaxInt64 / 1000, math.SmallestNonzeroFloat64} {
		check(f)
		check(-f)
	}
}

func BenchmarkAppendFloatMillis(b *testing.B) {
	buf := make([]byte, 0, 64)
	for i := 0; b.Loop(); i++ {
		buf, _ = AppendFloat(buf[:0], JSONMillis(time.Duration(i%5000000)*time.Microsecond/7))
	}
}
