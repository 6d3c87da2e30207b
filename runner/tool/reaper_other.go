//go:build !linux

package tool

// TrackGroup does nothing where tools have a parent-death signal only on
// Linux; elsewhere a killed awl leaves its tools running.
func TrackGroup(int, bool) {}
