//go:build !unix

package mcp

import (
	"os"
	"os/exec"
)

func isolate(*exec.Cmd) {}

func terminateGroup(p *os.Process) { p.Kill() }

func killGroup(p *os.Process) { p.Kill() }
