package sandbox

// WithoutNamespaces makes the sandboxes New makes until restore is called
// do without PID and mount namespaces and without a cgroup of their own,
// as for a user who is not root and whose cgroup is not delegated. (A
// user who is not root cannot make the namespaces anyway.)
func WithoutNamespaces() (restore func()) {
	noNamespaces, noCgroup = true, true
	return func() { noNamespaces, noCgroup = false, false }
}

// WithoutUserNamespaces makes the sandboxes New makes until restore is
// called do without namespaces, as for a user who is not root where user
// namespaces are unavailable, but with a cgroup where awl may make one.
func WithoutUserNamespaces() (restore func()) {
	noNamespaces = true
	return func() { noNamespaces = false }
}

// WithMaxWalk bounds the end of the run's walk for a .git made during the
// run to n entries until restore is called.
func WithMaxWalk(n int) (restore func()) {
	old := maxWalk
	maxWalk = n
	return func() { maxWalk = old }
}
