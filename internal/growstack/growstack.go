// Package growstack grows a goroutine's stack once, while it is shallow,
// to the size its deepest calls will need.
//
// A goroutine starts with a 2 KiB stack. Each time a call needs more, the
// runtime allocates one twice the size and copies the stack over, walking
// every frame on it: each frame's function is looked up in the binary's
// function table (pclntab) and its stack map read. Those tables are paged
// in from the executable 64 KiB at a time, so the copies made deep in a
// start-up (in a library's initialiser, in the HTTP client) each touched
// windows of the table that nothing else reads: in `awl run`, 28 of the
// 43 windows of pclntab it paged in (measured 2026-12-07 with `perf record
// -e page-faults -d`). Growing once, from a stack of one or two frames,
// costs one copy of those frames and no page of the new stack that the
// goroutine does not use: the frame that forces the growth is never
// written.
//
// The package imports nothing, so that its initialiser, which grows the
// main goroutine's stack, runs before every other package's but the
// runtime's own (the Go specification initialises packages in import-path
// order among those whose imports are initialised).
package growstack

// Main is the stack size the main goroutine is grown to at start: what
// `awl run` reached without it (2 KiB doubled four times, measured with a
// uprobe on runtime.copystack).
const Main = 32 << 10

// Small is the stack size Grow gives a goroutine that dials or waits: 8
// KiB, what the provider's warm dial reached.
const Small = 8 << 10

func init() { growMain(false) }

// Grow makes the calling goroutine's stack at least Small bytes, in one
// copy. Call it first in a goroutine whose calls go deep.
func Grow() { growSmall(false) }

// growMain and growSmall each ask for a frame that leaves the stack at
// least Main or Small bytes. The array is only written when write is true,
// which it never is: the function's prologue checks the stack for the
// whole frame, so the runtime grows it then, and none of the frame's pages
// is touched.
//
//go:noinline
func growMain(write bool) {
	if write {
		var b [Main/2 + 2<<10]byte
		keep(b[:])
	}
}

//go:noinline
func growSmall(write bool) {
	if write {
		var b [Small/2 + 1<<10]byte
		keep(b[:])
	}
}

//go:noinline
func keep(b []byte) { b[0]++ }
