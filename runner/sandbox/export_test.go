package sandbox

// WithoutNamespaces makes the sandboxes New makes until restore is called
// do without PID and mount namespaces, as for a user who is not root.
func WithoutNamespaces() (restore func()) {
	noNamespaces = true
	return func() { noNamespaces = false }
}
