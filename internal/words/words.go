// Package words is how healthctl writes and reads the words people use:
// a count with its noun, a yes or a no. It is pure and imports nothing of
// healthctl's, so the pure rooms (policy) and the input rooms (config,
// target) share it without importing each other or the output room.
package words

import (
	"fmt"
	"strconv"
	"strings"
)

// Plural counts a word: "1 probe", "2 probes", "0 probes" (English
// regular plurals only: every word healthctl counts takes an s).
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// ParseBool reads a boolean the way people write one in variables and
// files: true/false, yes/no, on/off, 1/0 (any case).
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("want true or false (also yes/no, on/off, 1/0)")
}
