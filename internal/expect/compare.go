package expect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The comparisons a JSON condition makes, written between PATH and VALUE:
// PATH=VALUE, PATH!=VALUE, and on numbers PATH<N, PATH<=N, PATH>N, PATH>=N.
const (
	OpEqual    = "="
	OpNotEqual = "!="
	OpLess     = "<"
	OpLessEq   = "<="
	OpMore     = ">"
	OpMoreEq   = ">="
)

// ParseJSON parses a JSON condition, PATH OP VALUE: the operator is the
// first "=", "!=", "<", "<=", ">" or ">=" that is not part of the gjson path
// (a query such as checks.#(name=="db").ok holds operators inside #(...)
// and inside quotes, and a backslash escapes the next character, gjson's
// own escape). A comparison of order wants a number.
func ParseJSON(s string) (JSONExpect, error) {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++ // the escaped character is part of the path
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth > 0:
		case c == '=' || c == '<' || c == '>' || c == '!' && i+1 < len(s) && s[i+1] == '=':
			op := string(c)
			if c != '=' && i+1 < len(s) && s[i+1] == '=' {
				op += "="
			}
			j := JSONExpect{Path: s[:i], Op: op, Value: s[i+len(op):]}
			if j.Path == "" {
				return j, fmt.Errorf("want PATH=VALUE (or PATH!=VALUE, PATH<N, PATH<=N, PATH>N, PATH>=N)")
			}
			if j.ordered() && !isJSONNumber(j.Value) {
				return j, fmt.Errorf("%s compares numbers: want a number after it, got %q", op, j.Value)
			}
			return j, nil
		}
	}
	return JSONExpect{}, fmt.Errorf("want PATH=VALUE (or PATH!=VALUE, PATH<N, PATH<=N, PATH>N, PATH>=N)")
}

// String is the condition as written: "status=UP", "queue.depth<100".
func (j JSONExpect) String() string { return j.Path + j.op() + j.Value }

func (j JSONExpect) op() string {
	if j.Op == "" {
		return OpEqual
	}
	return j.Op
}

func (j JSONExpect) ordered() bool {
	switch j.Op {
	case OpLess, OpLessEq, OpMore, OpMoreEq:
		return true
	}
	return false
}

// every says the path selects every element of a list (gjson's "#." over
// an array, or a query for all matches, "#(...)#"): the condition then
// holds when it holds for each element.
func (j JSONExpect) every() bool {
	return strings.Contains(j.Path, "#.") || strings.Contains(j.Path, ")#")
}

// judge says whether the value at the condition's path holds, and when it
// does not, why (the value as the body writes it, what was wanted).
func (j JSONExpect) judge(got gjson.Result) (bool, string) {
	if j.op() == OpEqual && jsonEqual(got, j.Value) {
		// A list compared whole ("items.#.id=[1,2]"), as before "every".
		return true, ""
	}
	if j.every() && got.IsArray() {
		elems := got.Array()
		if len(elems) == 0 {
			return false, fmt.Sprintf("JSON %s is an empty list (want every element %s%s)", j.Path, j.op(), j.Value)
		}
		for i, e := range elems {
			if ok, _ := j.holds(e); !ok {
				return false, fmt.Sprintf("JSON %s: element %d is %q, want every element %s%s", j.Path, i, jsonText(e), j.op(), j.Value)
			}
		}
		return true, ""
	}
	return j.holds(got)
}

// holds compares one value.
func (j JSONExpect) holds(got gjson.Result) (bool, string) {
	switch j.op() {
	case OpEqual:
		if jsonEqual(got, j.Value) {
			return true, ""
		}
		return false, fmt.Sprintf("JSON %s is %q, want %q", j.Path, jsonText(got), j.Value)
	case OpNotEqual:
		if !jsonEqual(got, j.Value) {
			return true, ""
		}
		return false, fmt.Sprintf("JSON %s is %q, want anything but %q", j.Path, jsonText(got), j.Value)
	}
	if got.Type != gjson.Number {
		return false, fmt.Sprintf("JSON %s is %q, not a number (want %s%s)", j.Path, jsonText(got), j.Op, j.Value)
	}
	want, err := strconv.ParseFloat(j.Value, 64)
	ok := err == nil
	switch j.Op {
	case OpLess:
		ok = ok && got.Num < want
	case OpLessEq:
		ok = ok && got.Num <= want
	case OpMore:
		ok = ok && got.Num > want
	case OpMoreEq:
		ok = ok && got.Num >= want
	}
	if ok {
		return true, ""
	}
	return false, fmt.Sprintf("JSON %s is %s, want %s%s", j.Path, got.Raw, j.Op, j.Value)
}
