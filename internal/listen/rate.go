package listen

import (
	"sync"
	"time"
)

// bucket is a token bucket: rate tokens a second, at most burst kept.
type bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(rate float64, now time.Time) *bucket {
	burst := max(rate, 1)
	return &bucket{rate: rate, burst: burst, tokens: burst, last: now}
}

// take takes a token if there is one; otherwise it says how long until
// the next.
func (b *bucket) take(now time.Time) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(b.burst, b.tokens+el.Seconds()*b.rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
}
