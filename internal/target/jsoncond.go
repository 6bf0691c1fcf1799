package target

// cutJSONCondition splits an --expect-json PATH=VALUE at the first '='
// outside gjson's #(...) queries and double quotes: in
// `checks.#(name=="db").ok=true` the path is `checks.#(name=="db").ok`
// (GOTCHAS; FuzzExpectJSON). ok is false without such an '='.
func cutJSONCondition(s string) (path, value string, ok bool) {
	depth, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '(' && i > 0 && s[i-1] == '#':
			depth++
		case c == ')' && depth > 0:
			depth--
		case c == '=' && depth == 0:
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
