package probe

// SetAfterExchange sets the hook that runs between an exchange's return
// and the making of its result, and returns a func that clears it.
func SetAfterExchange(f func()) func() {
	afterExchange = f
	return func() { afterExchange = nil }
}
