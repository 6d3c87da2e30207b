//go:build !unix

package sandbox

// closeInherited does nothing: children on this system inherit only the
// handles they are given.
func closeInherited() {}
