//go:build unix

package state

import (
	"math/rand/v2"
	"strconv"
)

// tempSuffix is the digits of a temporary file's name (".NAME<digits>").
func tempSuffix() string { return strconv.FormatUint(rand.Uint64(), 10) }
