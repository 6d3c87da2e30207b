//go:build linux && !amd64 && !arm64

package sandbox

// nsenterHelper is built for x86-64 and arm64 only: elsewhere commands enter the
// namespaces through nsenter(1), and keep a full bounding set there.
var nsenterHelper []byte
