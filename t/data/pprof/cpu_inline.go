// cpu_inline.go - a CPU profile for t/33-pprof-read.t: a few CPU-bound
// functions, goroutines, pprof labels naming a "thread", and a small
// function the compiler inlines (pprof shows it as its own frame).
//
//   go run cpu_inline.go cpu_inline.prof
package main

import (
	"context"
	"os"
	"runtime/pprof"
	"sync"
	"time"
)

var sink uint64

// square is small enough to be inlined into its callers
func square(x uint64) uint64 { return x * x }

//go:noinline
func leafHash(n uint64) uint64 {
	h := uint64(1469598103934665603)
	for i := uint64(0); i < n; i++ {
		h ^= square(i)
		h *= 1099511628211
	}
	return h
}

//go:noinline
func middle(n uint64) uint64 { return leafHash(n) + leafHash(n/2) }

//go:noinline
func recurse(depth int, n uint64) uint64 {
	if depth == 0 {
		return middle(n)
	}
	return recurse(depth-1, n) ^ square(uint64(depth))
}

//go:noinline
func spin(until time.Time) {
	for time.Now().Before(until) {
		sink += recurse(3, 20000)
	}
}

func worker(name string, until time.Time, wg *sync.WaitGroup) {
	defer wg.Done()
	pprof.Do(context.Background(), pprof.Labels("thread", name), func(context.Context) {
		spin(until)
	})
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	until := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for _, n := range []string{"worker-a", "worker-b"} {
		wg.Add(1)
		go worker(n, until, &wg)
	}
	spin(until) // the main goroutine, unlabelled
	wg.Wait()
	pprof.StopCPUProfile()
	f.Close()
}
