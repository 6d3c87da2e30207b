package growstack

import (
	"testing"
	"unsafe"
)

// deep uses about n×300 bytes of stack and returns the address of a local
// of its caller's frame as it is after the calls: the same as before them
// if the stack was not copied.
//
//go:noinline
func deep(n int) byte {
	var b [256]byte
	b[n%len(b)] = byte(n)
	if n == 0 {
		return b[0]
	}
	return deep(n-1) + b[1]
}

// moved reports whether a goroutine that first calls grow, then calls n
// levels of deep, had its stack copied (its local moved) during those calls.
func moved(grow func(), n int) bool {
	done := make(chan bool)
	go func() {
		grow()
		var x byte
		before := uintptr(unsafe.Pointer(&x))
		x = deep(n)
		after := uintptr(unsafe.Pointer(&x))
		done <- before != after || x == 255
	}()
	return <-done
}

// TestGrowLeavesRoom: after Grow, a goroutine's calls of up to 6 KiB
// (the warm dial's depth) run without a stack copy; without it, they copy.
func TestGrowLeavesRoom(t *testing.T) {
	if !moved(func() {}, 20) {
		t.Fatal("a new goroutine's 6 KiB of calls did not copy its stack: the test measures nothing")
	}
	if moved(Grow, 20) {
		t.Error("after Grow, 6 KiB of calls still copied the stack")
	}
}

// TestMainRoom: what the initialiser does for the main goroutine leaves
// room for 28 KiB of calls without a copy (a text run reaches 32 KiB of
// stack in all).
func TestMainRoom(t *testing.T) {
	if !moved(func() {}, 90) {
		t.Fatal("a new goroutine's 28 KiB of calls did not copy its stack: the test measures nothing")
	}
	if moved(func() { growMain(false) }, 90) {
		t.Error("after growMain, 28 KiB of calls still copied the stack")
	}
}
