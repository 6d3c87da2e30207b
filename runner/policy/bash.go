package policy

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds how deeply the judge follows nested constructs; a
// command nested deeper is denied rather than walked.
const maxDepth = 200

// maxCommand bounds the length of a command the judge parses; a longer one
// is denied when bash rules exist.
const maxCommand = 1 << 20

// parsers keeps bash parsers for reuse: Parse resets one.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// arg is one word of a simple command as the judge sees it: its value when
// the text fixes it (static), or else the text it starts with (s is
// "user.name=" for user.name="$N") and whether it may expand to any
// number of words (multi: an unquoted expansion, a glob, a brace
// expansion).
type arg struct {
	s      string
	static bool
	multi  bool
}

// unknown is a word whose value the text does not fix.
var unknown = arg{}

// judge walks one bash command.
type judge struct {
	p      *Policy
	src    string
	depth  int
	denial *Denial
	writes []string // files redirections write, as written; "" when not in the text
	cd     bool     // the command changes directory (cd, pushd, popd)
	// args holds the words of the simple commands being judged, the
	// innermost last (a $(…) in a word is judged while its command's
	// words are being read); cmds the commands unwrap returns. Both are
	// reused from one simple command to the next.
	args []arg
	cmds [][]arg
}

// Bash judges a bash command: nil when the policy allows it. A run whose
// rules say nothing of bash commands or written paths never parses it.
func (p *Policy) Bash(command string) *Denial {
	if p == nil || (!p.bashRules && !p.hasWriteRules()) {
		return nil
	}
	return p.judgeBash(command)
}

func (p *Policy) judgeBash(command string) *Denial {
	j := &judge{p: p, src: command}
	if len(command) > maxCommand {
		j.cannot(fmt.Sprintf("the command is longer than %d bytes", maxCommand))
		return j.denial
	}
	parser := parsers.Get().(*syntax.Parser)
	f, err := parser.Parse(strings.NewReader(command), "")
	parsers.Put(parser)
	if err != nil {
		return &Denial{Tool: "bash", Reason: "the command does not parse: " + err.Error()}
	}
	if strings.Contains(command, "\r") {
		// The parser ends a line at \r\n; bash keeps the \r in the word
		// before it (git status\r\n runs git with "status\r").
		j.cannot("a carriage return, which bash reads as part of a word")
	}
	if strings.Contains(command, "\\\n") && strings.Contains(command, "#") && commentJoinsLines(command) {
		j.cannot("a comment that ends in a backslash: the parser reads the next line as part of it, bash runs it")
	}
	j.stmts(f.Stmts)
	if j.denial == nil {
		j.judgeWrites()
	}
	return j.denial
}

// commentJoinsLines reports whether a comment of command ends in a
// backslash-newline, which mvdan.cc/sh takes as a line continuation that
// hides the next line in the comment, while bash ends the comment there
// and runs that line (# x \<newline>rm y runs rm y). Parsed again with
// the comments kept, only for a command that has both.
func commentJoinsLines(command string) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(command), "")
	if err != nil {
		return false // the first parse succeeded: not reached
	}
	joins := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok && (strings.Contains(c.Text, "\n") || strings.HasSuffix(c.Text, "\\")) {
			joins = true
		}
		return !joins
	})
	return joins
}

// deny records the first denial.
func (j *judge) deny(rule, reason string) {
	if j.denial == nil {
		j.denial = &Denial{Tool: "bash", Rule: rule, Reason: reason}
	}
}

// cannot denies what cannot be judged from the text, unless bash is
// allowed whole with no bash deny rule.
func (j *judge) cannot(reason string) {
	if !j.p.bashWhole {
		j.deny("", reason+": it cannot be judged from the text, and bash rules are set")
	}
}

func (j *judge) text(n syntax.Node) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(j.src) || s > e {
		return ""
	}
	t := strings.Join(strings.Fields(j.src[s:e]), " ")
	if len(t) > 200 {
		t = t[:200] + "…"
	}
	return t
}

func (j *judge) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		j.stmt(s)
	}
}

func (j *judge) stmt(s *syntax.Stmt) {
	if s == nil || j.denial != nil {
		return
	}
	j.depth++
	defer func() { j.depth-- }()
	if j.depth > maxDepth {
		j.deny("", "the command is nested more than 200 levels deep")
		return
	}
	for _, r := range s.Redirs {
		j.redirect(r)
	}
	j.command(s.Cmd)
}

func (j *judge) command(c syntax.Command) {
	if j.denial != nil {
		return
	}
	switch c := c.(type) {
	case nil:
	case *syntax.CallExpr:
		j.call(c)
	case *syntax.IfClause:
		j.stmts(c.Cond)
		j.stmts(c.Then)
		if c.Else != nil {
			j.command(c.Else)
		}
	case *syntax.WhileClause:
		j.stmts(c.Cond)
		j.stmts(c.Do)
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			j.assignName(l.Name.Value)
			for _, w := range l.Items {
				j.word(w, false)
			}
		case *syntax.CStyleLoop:
			j.arith(l.Init)
			j.arith(l.Cond)
			j.arith(l.Post)
		}
		j.stmts(c.Do)
	case *syntax.CaseClause:
		j.word(c.Word, false)
		for _, it := range c.Items {
			for _, w := range it.Patterns {
				j.word(w, false)
			}
			j.stmts(it.Stmts)
		}
	case *syntax.Block:
		j.stmts(c.Stmts)
	case *syntax.Subshell:
		j.stmts(c.Stmts)
	case *syntax.BinaryCmd:
		j.stmt(c.X)
		j.stmt(c.Y)
	case *syntax.FuncDecl:
		j.stmt(c.Body)
	case *syntax.ArithmCmd:
		j.arith(c.X)
	case *syntax.TestClause:
		j.test(c.X)
	case *syntax.DeclClause:
		j.decl(c)
	case *syntax.LetClause:
		for _, x := range c.Exprs {
			j.arith(x)
		}
	case *syntax.TimeClause:
		j.stmt(c.Stmt)
	case *syntax.CoprocClause:
		if c.Name != nil {
			j.word(c.Name, false)
		}
		j.stmt(c.Stmt)
	default:
		j.cannot(fmt.Sprintf("%q is a construct the judge does not know", j.text(c)))
	}
}

// dangerousVars are the variables whose value changes which program a
// command name starts, runs code of the shell's own, or names a program or
// code an allowed program then runs (git's pager, diff driver, ssh, editor;
// go's -toolexec through GOFLAGS; node's --require): assigning one cannot
// be judged from the text. dangerousPrefixes are families of them.
var (
	dangerousVars = []string{
		"PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "BASH_LOADABLES_PATH", "HOME", "CDPATH", "EXECIGNORE",
		"PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "SHELL", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS",
		"GOFLAGS", "CC", "CXX", "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB",
	}
	dangerousPrefixes = []string{"LD_", "DYLD_", "BASH_FUNC_", "GIT_", "npm_config_", "NPM_CONFIG_"}
	// safeGitVars are GIT_ variables that name no program.
	safeGitVars = []string{"GIT_TERMINAL_PROMPT", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE"}
)

// dangerousVar reports whether assigning name cannot be judged.
func dangerousVar(name string) bool {
	if slices.Contains(dangerousVars, name) {
		return true
	}
	if slices.Contains(safeGitVars, name) {
		return false
	}
	return slices.ContainsFunc(dangerousPrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}

func (j *judge) assignName(name string) {
	if dangerousVar(name) {
		j.cannot(fmt.Sprintf("assigning %s changes what a command runs", name))
	}
}

func (j *judge) assign(a *syntax.Assign) {
	if a.Name == nil {
		// A word of declare/export/local evaluated at run time.
		j.cannot("a declaration whose name is not in the text")
		if a.Value != nil {
			j.word(a.Value, false)
		}
		return
	}
	j.assignName(a.Name.Value)
	if a.Index != nil {
		j.arith(a.Index)
	}
	if a.Value != nil {
		j.word(a.Value, true)
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				j.arith(e.Index)
			}
			if e.Value != nil {
				j.word(e.Value, false)
			}
		}
	}
}

// decl judges declare, export, local, readonly, typeset and nameref: their
// assignments as assignments; an option other than -x, -r, -g, -p, -f, -F
// (a nameref, an integer that evaluates arithmetic) cannot be judged.
func (j *judge) decl(c *syntax.DeclClause) {
	for _, a := range c.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			v := j.word(a.Value, false)
			if v.static && strings.HasPrefix(v.s, "-") {
				if strings.Trim(v.s, "-xrgpfF") != "" {
					j.cannot(fmt.Sprintf("%s %s", c.Variant.Value, v.s))
				}
				continue
			}
		}
		j.assign(a)
	}
	if c.Variant.Value == "nameref" {
		j.cannot("nameref")
	}
}

func (j *judge) redirect(r *syntax.Redirect) {
	var target arg
	if r.Word != nil {
		target = j.word(r.Word, false)
	}
	if r.Hdoc != nil {
		// The body of a quoted delimiter's (<<'EOF') is one literal.
		j.word(r.Hdoc, true)
		// The delimiter as bash reads it: its backslash-newlines joined.
		delim := strings.ReplaceAll(j.span(r.Word), "\\\n", "")
		if !quotedDelim(r.Word) && heredocEndsEarly(j.span(r.Hdoc), delim, r.Op == syntax.DashHdoc) {
			j.cannot("a here-document whose backslash-newlines join into its delimiter: bash ends it there and runs the lines after as commands")
		}
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
	case syntax.DplOut:
		if target.static && (target.s == "-" || strings.Trim(target.s, "0123456789") == "" || strings.Trim(strings.TrimSuffix(target.s, "-"), "0123456789") == "") {
			return // a descriptor duplicated or closed
		}
	default:
		return
	}
	if !target.static || target.multi || strings.HasPrefix(target.s, "~") {
		j.writes = append(j.writes, "")
		return
	}
	j.writes = append(j.writes, target.s)
}

// judgeWrites judges the files the redirections write by the write rules.
func (j *judge) judgeWrites() {
	if !j.p.hasWriteRules() {
		return
	}
	dirs := map[string]string{}
	for _, w := range j.writes {
		switch {
		case w == "":
			j.deny("", "a redirection writes a file whose name is not in the text, and write rules are set")
		case w == "/dev/null" || w == "/dev/stdout" || w == "/dev/stderr":
		case j.cd && !filepath.IsAbs(w):
			j.deny("", fmt.Sprintf("a redirection writes %s after the command changes directory, and write rules are set", w))
		default:
			if d := j.p.checkPath("write", j.p.abs(w), dirs); d != nil {
				d.Tool = "bash"
				d.Reason = "the redirection to " + w + ": " + d.Reason
				j.denial = d
			}
		}
		if j.denial != nil {
			return
		}
	}
}

func (j *judge) arith(x syntax.ArithmExpr) {
	if j.denial != nil || x == nil {
		return
	}
	j.depth++
	defer func() { j.depth-- }()
	if j.depth > maxDepth {
		j.deny("", "the command is nested more than 200 levels deep")
		return
	}
	switch x := x.(type) {
	case *syntax.Word:
		if lit := x.Lit(); lit != "" && strings.Trim(lit, "0123456789#xXabcdefABCDEF") == "" && lit[0] >= '0' && lit[0] <= '9' {
			return // a number
		}
		if lit := x.Lit(); lit == "@" || lit == "*" {
			return
		}
		// bash evaluates a variable's value in arithmetic as an expression,
		// and an array subscript in it runs $(…).
		j.cannot(fmt.Sprintf("arithmetic on %q evaluates a value the text does not show", j.text(x)))
		j.word(x, true)
	case *syntax.BinaryArithm:
		j.arith(x.X)
		j.arith(x.Y)
	case *syntax.UnaryArithm:
		j.arith(x.X)
	case *syntax.ParenArithm:
		j.arith(x.X)
	default:
		j.cannot("an arithmetic construct the judge does not know")
	}
}

func (j *judge) test(x syntax.TestExpr) {
	if j.denial != nil || x == nil {
		return
	}
	switch x := x.(type) {
	case *syntax.Word:
		j.word(x, true)
	case *syntax.BinaryTest:
		if x.Op >= syntax.TsEql && x.Op <= syntax.TsGtr {
			// [[ a -eq b ]] evaluates both sides as arithmetic.
			for _, y := range []syntax.TestExpr{x.X, x.Y} {
				if w, ok := y.(*syntax.Word); ok {
					j.arith(w)
				} else {
					j.test(y)
				}
			}
			return
		}
		j.test(x.X)
		j.test(x.Y)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if w, ok := x.X.(*syntax.Word); !ok || strings.ContainsAny(w.Lit(), "[") || w.Lit() == "" {
				j.cannot("[[ -v ]] of a name the text does not fix")
			}
		}
		j.test(x.X)
	case *syntax.ParenTest:
		j.test(x.X)
	default:
		j.cannot("a test construct the judge does not know")
	}
}

// word walks a word's nested commands and returns what it expands to.
func (j *judge) word(w *syntax.Word, quoted bool) arg {
	if w == nil || j.denial != nil {
		return unknown
	}
	j.depth++
	defer func() { j.depth-- }()
	if j.depth > maxDepth {
		j.deny("", "the command is nested more than 200 levels deep")
		return unknown
	}
	if len(w.Parts) == 1 {
		return j.part(w.Parts[0], quoted, true)
	}
	j.joinedDollar(w.Parts)
	a := arg{static: true}
	var b strings.Builder
	for i, part := range w.Parts {
		p := j.part(part, quoted, i == 0)
		if a.static {
			b.WriteString(p.s) // past the first part not in the text, no more
		}
		a.static = a.static && p.static
		a.multi = a.multi || p.multi
	}
	a.s = b.String()
	return a
}

func (j *judge) part(part syntax.WordPart, quoted, first bool) arg {
	switch x := part.(type) {
	case *syntax.Lit:
		if quoted {
			return arg{s: unescapeDouble(x.Value), static: true}
		}
		s, glob := unescapeLit(x.Value)
		a := arg{s: s, static: true, multi: glob || braces(x.Value)}
		if first && strings.HasPrefix(x.Value, "~") {
			a.static = false // the home directory
		}
		return a
	case *syntax.SglQuoted:
		if x.Dollar {
			s, ok := ansiC(x.Value)
			return arg{s: s, static: ok}
		}
		return arg{s: x.Value, static: true}
	case *syntax.DblQuoted:
		j.joinedDollar(x.Parts)
		a := arg{static: true}
		for _, q := range x.Parts {
			p := j.part(q, true, false)
			if a.static {
				a.s += p.s
			}
			a.static = a.static && p.static
			a.multi = a.multi || p.multi
		}
		return a
	case *syntax.ParamExp:
		j.param(x, quoted)
		multi := !quoted || x.Param != nil && x.Param.Value == "@" || x.Index != nil && isAt(x.Index)
		return arg{multi: multi}
	case *syntax.CmdSubst:
		j.depth++
		j.stmts(x.Stmts)
		j.depth--
		return arg{multi: !quoted}
	case *syntax.ArithmExp:
		j.arith(x.X)
		return arg{multi: !quoted}
	case *syntax.ProcSubst:
		j.depth++
		j.stmts(x.Stmts)
		j.depth--
		return arg{}
	case *syntax.ExtGlob:
		return arg{multi: true}
	case *syntax.BraceExp:
		for _, e := range x.Elems {
			j.word(e, quoted)
		}
		return arg{multi: true}
	default:
		j.cannot("a word construct the judge does not know")
		return arg{}
	}
}

func isAt(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// param walks a parameter expansion: its nested words, and what makes bash
// evaluate a value as code (an indirection, a subscript, ${x@P}).
func (j *judge) param(x *syntax.ParamExp, quoted bool) {
	if quoted && x.Exp != nil && sglQuotedCode(x.Exp.Word) {
		// In double quotes (and here-documents) bash keeps the single
		// quotes of ${x:-'…'} as text and expands what is between them:
		// "${x:-'$(cmd)'}" runs cmd, which the parser reads as quoted.
		j.cannot(fmt.Sprintf("%q: single quotes in a double-quoted ${…} do not quote in bash", j.text(x)))
	}
	if x.Excl {
		j.cannot(fmt.Sprintf("the indirect expansion %q", j.text(x)))
	}
	if x.NestedParam != nil {
		j.cannot("a nested parameter expansion")
	}
	if x.Index != nil && !isAt(x.Index) {
		j.arith(x.Index)
	}
	if x.Slice != nil {
		j.arith(x.Slice.Offset)
		j.arith(x.Slice.Length)
	}
	if x.Repl != nil {
		j.word(x.Repl.Orig, true)
		j.word(x.Repl.With, true)
	}
	if x.Exp != nil {
		if x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && strings.ContainsAny(x.Exp.Word.Lit(), "P") {
			j.cannot(fmt.Sprintf("%q expands a value as a prompt, which runs commands", j.text(x)))
		}
		j.word(x.Exp.Word, true)
	}
}

func (j *judge) call(c *syntax.CallExpr) {
	for _, a := range c.Assigns {
		j.assign(a)
	}
	if len(c.Args) == 0 {
		return
	}
	base := len(j.args)
	for _, w := range c.Args {
		a := j.word(w, false) // may judge a nested command, which appends past base and truncates back
		j.args = append(j.args, a)
	}
	if j.denial == nil {
		j.simple(j.args[base:], c)
	}
	j.args = j.args[:base]
}

// sglQuotedCode reports whether w has single-quoted text ('…' or $'…')
// holding a $ or a backquote.
func sglQuotedCode(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		if q, ok := p.(*syntax.SglQuoted); ok && strings.ContainsAny(q.Value, "$`") {
			return true
		}
	}
	return false
}

// joinedDollar refuses a $ that ends a piece of literal text another
// follows: the parser splits literal text only where a backslash-newline
// was, which bash joins before it expands, in double quotes and unquoted
// here-documents alike ("$\<newline>(cmd)" runs cmd).
func (j *judge) joinedDollar(parts []syntax.WordPart) {
	for i := 0; i+1 < len(parts); i++ {
		l, ok := parts[i].(*syntax.Lit)
		if _, next := parts[i+1].(*syntax.Lit); ok && next && strings.HasSuffix(l.Value, "$") {
			j.cannot(fmt.Sprintf("%q: a $ and what follows it joined by a backslash-newline, which bash expands", j.text(l)))
			return
		}
	}
}

// span is the source text of n.
func (j *judge) span(n syntax.Node) string {
	if n == nil {
		return ""
	}
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(j.src) || s > e {
		return ""
	}
	return j.src[s:e]
}

// quotedDelim reports whether bash takes a here-document's delimiter as
// quoted ('EOF', "EOF", E\OF: any quoting in it), which keeps the body
// as it is, backslash-newlines included.
func quotedDelim(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			// A backslash-newline joins; it does not quote.
			if strings.Contains(strings.ReplaceAll(p.Value, "\\\n", ""), `\`) {
				return true
			}
		}
	}
	return false
}

// heredocEndsEarly reports whether bash ends an unquoted here-document
// before the parser does: bash joins the body's backslash-newlines
// before it looks for the delimiter, so "EO\<newline>F" is the
// delimiter to bash and text to the parser, and the lines after it are
// commands to bash only. body is the parser's body, its own delimiter
// line last.
func heredocEndsEarly(body, delim string, dash bool) bool {
	if !strings.Contains(body, "\\\n") {
		return false
	}
	lines := strings.Split(body, "\n")
	cur := ""
	for _, l := range lines[:len(lines)-1] {
		if n := len(l) - len(strings.TrimRight(l, `\`)); n%2 == 1 {
			cur += l[:len(l)-1]
			continue
		}
		cur += l
		if cur == delim || dash && strings.TrimLeft(cur, "\t") == delim {
			return true
		}
		cur = ""
	}
	return false
}
