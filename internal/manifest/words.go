package manifest

// A command's words: the sleep in a preStop command, and splitting a
// command line into words as Compose does.

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// sleepRe finds `sleep N` in a shell script.
var sleepRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[;&|(\s])sleep\s+([0-9.]+[smh]?)\b`)
})

// longerSleep is a shell preStop command that does more than sleep (sh -c
// 'sleep 2 && kill -QUIT 1') with its sleep set to need seconds, as a YAML
// flow list; ok is false for a command that only sleeps.
func longerSleep(argv []string, need int) (string, bool) {
	if len(argv) < 3 || !slices.Contains(shells, path.Base(argv[0])) || argv[1] != "-c" {
		return "", false
	}
	loc := sleepRe().FindStringSubmatchIndex(argv[2])
	if loc == nil {
		return "", false
	}
	script := argv[2][:loc[2]] + strconv.Itoa(need) + argv[2][loc[3]:]
	if strings.TrimSpace(sleepRe().ReplaceAllString(script, "")) == "" {
		return "", false // only a sleep: the plain fix says it
	}
	out := append(append([]string{}, argv[:2]...), script)
	out = append(out, argv[3:]...)
	q := make([]string, len(out))
	for i, w := range out {
		q[i] = strconv.Quote(w)
	}
	return "[" + strings.Join(q, ", ") + "]", true
}

// SleepOf returns how long a preStop exec command sleeps: ["sleep", "5"],
// ["/bin/sleep", "5s"], ["sh", "-c", "sleep 5"].
func SleepOf(argv []string) (time.Duration, bool) {
	if len(argv) >= 2 && path.Base(argv[0]) == "sleep" {
		return sleepArg(argv[1])
	}
	if len(argv) >= 3 && slices.Contains(shells, path.Base(argv[0])) && argv[1] == "-c" {
		if m := sleepRe().FindStringSubmatch(argv[2]); m != nil {
			return sleepArg(m[1])
		}
	}
	return 0, false
}

func sleepArg(s string) (time.Duration, bool) {
	unit := time.Second
	switch {
	case strings.HasSuffix(s, "s"):
		s = strings.TrimSuffix(s, "s")
	case strings.HasSuffix(s, "m"):
		s, unit = strings.TrimSuffix(s, "m"), time.Minute
	case strings.HasSuffix(s, "h"):
		s, unit = strings.TrimSuffix(s, "h"), time.Hour
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n * float64(unit)), true
}

// SplitWords splits a command line into words the way Compose and
// drain-test's --exec do: whitespace separates, single and double quotes
// group, backslash escapes; no variables, globs or operators (no shell).
func SplitWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool
		quote rune
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]):
				i++
				cur.WriteRune(rs[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			cur.WriteRune(rs[i])
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
