package main

import "github.com/rogpeppe/go-internal/testscript"

// sessionsScriptCmds are script commands added for the sessions scripts.
func sessionsScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){}
}
