package scheme

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// schemeHome are the files that may decide by a URL scheme's name: the
// table, each protocol's exchange, and the rooms of HTTP's own rules that
// are about http and https as such (redirects, proxy URLs). The test-only rooms (fixtures, the truth client) speak to
// servers, not about schemes.
var schemeHome = []string{
	"internal/scheme/schemes.go",
	"internal/probe/httpprobe/http.go", "internal/probe/httpprobe/http1.go", "internal/probe/httpprobe/redirect.go",
	"internal/probe/grpcprobe/grpc.go", "internal/probe/streamprobe/tcp.go",
	"internal/probe/dbprobe/redis.go", "internal/probe/dbprobe/postgres.go", "internal/probe/streamprobe/stream.go", "internal/probe/streamprobe/dnsprobe.go",
	"internal/follow/", "internal/proxyenv/",
	"internal/fixture/", "internal/truthclient/", "internal/kubedocs/",
	// Synthetic fleets for the page's tests: URLs as data.
	"internal/listen/listentest/",
	// The demo's servers are HTTP servers it starts itself: their URLs
	// are what they are, not a choice among protocols.
	"internal/demo/", "internal/cmd/demo/",
}

// TestSchemeNamesStayInTheTable: no production file outside the scheme
// table and its exchanges decides by a scheme's name — no comparison of a
// URL's scheme with a literal, no switch over one, no EqualFold of one, no
// URL built by hand from "grpc://" + HOST (ask the row: Scheme.URL,
// OverTLS, DefaultScheme) — so a new protocol is one row and one file
// (SPEC §13). A place that must
// know a protocol's trait asks its row (LookupScheme). The answer side
// likewise: no Proto… constants in classify (or read from it), no type
// assertion to a kind's answer type outside the kind's package.
func TestSchemeNamesStayInTheTable(t *testing.T) {
	root := filepath.Join("..", "..")
	names := map[string]bool{}
	for _, s := range schemes {
		names[s.Name] = true
		for _, a := range s.Aliases {
			names[a] = true
		}
	}
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") ||
			!(strings.HasPrefix(rel, "internal/") || strings.HasPrefix(rel, "cmd/")) {
			return nil
		}
		for _, home := range schemeHome {
			if rel == home || strings.HasSuffix(home, "/") && strings.HasPrefix(rel, home) {
				return nil
			}
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			report := func(at token.Pos, lit string) {
				found = append(found, fset.Position(at).String()+": "+lit)
			}
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.ADD {
					for _, side := range []ast.Expr{n.X, n.Y} {
						if lit, ok := stringLit(side); ok {
							if name, _, ok := strings.Cut(lit, "://"); ok && names[name] {
								report(side.Pos(), lit)
							}
						}
					}
				}
				if n.Op == token.EQL || n.Op == token.NEQ {
					if lit, ok := schemeLit(n.X, n.Y, names); ok {
						report(n.Pos(), lit)
					}
				}
			case *ast.SwitchStmt:
				if n.Tag == nil || !isScheme(n.Tag) {
					return true
				}
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						if lit, ok := stringLit(e); ok && names[lit] {
							report(e.Pos(), lit)
						}
					}
				}
			case *ast.SelectorExpr:
				// The answer side: no protocol constants for classify
				// to test on (a kind declares itself: classify.Declare).
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "classify" && isProto(n.Sel.Name) {
					report(n.Pos(), "classify."+n.Sel.Name)
				}
			case *ast.Ident:
				if strings.HasPrefix(rel, "internal/classify/") && isProto(n.Name) {
					report(n.Pos(), n.Name)
				}
			case *ast.TypeAssertExpr:
				// An answer is read through classify.Answer, never as
				// one kind's type outside the kind's own package.
				if pkg, ok := kindType(n.Type); ok && !strings.HasPrefix(rel, "internal/"+pkg+"/") {
					report(n.Pos(), "a type assertion to "+pkg+"'s answer")
				}
			case *ast.TypeSwitchStmt:
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						if pkg, ok := kindType(e); ok && !strings.HasPrefix(rel, "internal/"+pkg+"/") {
							report(e.Pos(), "a type switch on "+pkg+"'s answer")
						}
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "EqualFold" && len(n.Args) == 2 {
					if lit, ok := schemeLit(n.Args[0], n.Args[1], names); ok {
						report(n.Pos(), lit)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: a scheme's name outside the scheme table (ask scheme.LookupScheme for the row's trait)", f)
	}
}

// isProto says name is a protocol constant of the kind classify once
// tested on (ProtoGRPC, ProtoRedis…).
func isProto(name string) bool {
	return len(name) > 5 && strings.HasPrefix(name, "Proto") && name[5] >= 'A' && name[5] <= 'Z' && name != "ProtoMajor" && name != "ProtoMinor"
}

// kindPackages are the packages that declare a kind's answer type.
var kindPackages = []string{"grpchealth", "rediswire", "pgwire", "mysqlwire", "dnswire", "amqpwire"}

// kindType says e names a type of a kind's package (*grpchealth.Reply).
func kindType(e ast.Expr) (string, bool) {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", false
	}
	for _, k := range kindPackages {
		if x.Name == k {
			return k, true
		}
	}
	return "", false
}

// schemeLit says one of a and b is a URL's scheme and the other a literal
// naming a scheme of the table.
func schemeLit(a, b ast.Expr, names map[string]bool) (string, bool) {
	for _, pair := range [][2]ast.Expr{{a, b}, {b, a}} {
		if lit, ok := stringLit(pair[1]); ok && names[lit] && isScheme(pair[0]) {
			return lit, true
		}
	}
	return "", false
}

// isScheme says e reads a URL's scheme: x.Scheme, or a variable named
// scheme (also through strings.ToLower).
func isScheme(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return e.Sel.Name == "Scheme"
	case *ast.Ident:
		return strings.EqualFold(e.Name, "scheme")
	case *ast.CallExpr:
		return len(e.Args) == 1 && isScheme(e.Args[0])
	}
	return false
}

func stringLit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}

// TestInflightCallsAreTheirRows: a row's --inflight call form is a URL of
// its own scheme, and drain-test calls it as the gRPC unary call it knows
// (a row that asks for a gRPC service).
func TestInflightCallsAreTheirRows(t *testing.T) {
	n := 0
	for _, s := range schemes {
		if s.Drain.Call == "" {
			continue
		}
		n++
		if !strings.HasPrefix(s.Drain.Call, s.Name+"://") || s.Options&AppliesGRPCService == 0 {
			t.Errorf("row %s: --inflight call %q", s.Name, s.Drain.Call)
		}
	}
	if n == 0 || !strings.Contains(InflightCalls(), "://") {
		t.Fatalf("no row takes an --inflight call: %q", InflightCalls())
	}
}

// TestSchemeURLsWrittenOnlyInTheirRooms: outside the table, its exchanges
// and each kind's own wire package, no production string writes a URL of
// a protocol other than HTTP ("grpc://…" in a flag's help, an error's
// "want redis://…"): what a row's URLs look like, the help and the errors
// read from the row (URLList, InflightCalls, Form), so a row's change is
// one edit.
func TestSchemeURLsWrittenOnlyInTheirRooms(t *testing.T) {
	root := filepath.Join("..", "..")
	var names []string
	for _, s := range schemes {
		if s.Kind != nil {
			names = append(names, append([]string{s.Name}, s.Aliases...)...)
		}
	}
	home := func(rel string) bool {
		for _, h := range schemeHome {
			if rel == h || strings.HasSuffix(h, "/") && strings.HasPrefix(rel, h) {
				return true
			}
		}
		for _, k := range append([]string{"icmpwire"}, kindPackages...) {
			if strings.HasPrefix(rel, "internal/"+k+"/") {
				return true
			}
		}
		return false
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") ||
			!(strings.HasPrefix(rel, "internal/") || strings.HasPrefix(rel, "cmd/")) || home(rel) {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			e, ok := n.(ast.Expr)
			if !ok {
				return true
			}
			if lit, ok := stringLit(e); ok {
				for _, name := range names {
					if strings.Contains(lit, name+"://") {
						t.Errorf("%s: %q writes a %s:// URL outside its rooms (read it from the row)", fset.Position(n.Pos()), lit, name)
						break
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
