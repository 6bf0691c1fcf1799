package output

import "strconv"

// Plural counts a word: "1 probe", "2 probes", "0 probes" (English
// regular plurals only: every word healthctl counts takes an s).
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
