//go:build !unix

package tool

import (
	"os"
	"os/exec"
)

// isolate does nothing where there are no process groups.
func isolate(*exec.Cmd) {}

// killGroup kills p; its children are not reached without process groups.
func killGroup(p *os.Process) error { return p.Kill() }

// keepOwner does nothing where files have no unix owner.
func keepOwner(*os.File, os.FileInfo) {}
