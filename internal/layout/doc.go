// Package layout holds no code: its test keeps the imports running the one
// way STYLE.md and ARCHITECTURE.md draw them, over `go list`.
package layout
