package ui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/ledger"
)

// TestNoStageSpelledRaw: no file of ui/, tests included, spells a
// stage, a result or a decision's proof status as a raw string where it
// is compared, converted, assigned or set as a field: the ledger's typed
// constants (and, for proofs, which the ledger has no constants for, the
// proof* names declared once in authority.go) are the only spelling.
// Words shown to the operator ("reconciled" as a detail label) are text,
// not the vocabulary, and are not looked at.
func TestNoStageSpelledRaw(t *testing.T) {
	words := map[string]bool{proofSigned: true, proofUnsigned: true, proofInvalid: true,
		string(ledger.ResultExecuted): true, string(ledger.ResultNotExecuted): true}
	for _, s := range ledger.States() {
		words[string(s)] = true
	}
	files, err := filepath.Glob(filepath.Join(pkgDir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sources: %v", err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		raw := func(e ast.Expr) {
			if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, _ := strconv.Unquote(lit.Value); words[v] {
					t.Errorf("%s: %s spelled raw; use the ledger's constant", fset.Position(lit.Pos()), lit.Value)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					raw(n.X)
					raw(n.Y)
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					raw(e)
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && vocabularyField(id.Name) {
					raw(n.Value)
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && vocabularyField(sel.Sel.Name) && i < len(n.Rhs) {
						raw(n.Rhs[i])
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && vocabularyField(sel.Sel.Name) && len(n.Args) == 1 {
					raw(n.Args[0]) // ledger.State("pending")
				}
			case *ast.ValueSpec:
				// The proof names are declared once, untyped, in authority.go.
				if filepath.Base(path) == "authority.go" && n.Type == nil && strings.HasPrefix(n.Names[0].Name, "proof") {
					return false
				}
				for _, v := range n.Values {
					raw(v)
				}
			}
			return true
		})
	}
}

// vocabularyField reports whether a field or type name holds the
// ledger's vocabulary.
func vocabularyField(name string) bool {
	switch name {
	case "State", "Result", "Status", "Decision", "DecisionKind":
		return true
	}
	return false
}
