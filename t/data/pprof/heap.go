// heap.go - a heap profile for t/33-pprof-read.t: allocations from a few
// call paths, some kept live (inuse_*), some garbage (alloc_* only).
//
//   go run heap.go heap.prof
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte

//go:noinline
func allocKept(n int) { keep = append(keep, make([]byte, n)) }

//go:noinline
func allocGarbage(n int) []byte { return make([]byte, n) }

//go:noinline
func build(rounds int) {
	for i := 0; i < rounds; i++ {
		allocKept(64 << 10)
		_ = allocGarbage(32 << 10)
	}
}

//go:noinline
func other(rounds int) {
	for i := 0; i < rounds; i++ {
		_ = allocGarbage(256 << 10)
	}
}

func main() {
	runtime.MemProfileRate = 4096
	build(40)
	other(20)
	runtime.GC()
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		panic(err)
	}
	f.Close()
}
