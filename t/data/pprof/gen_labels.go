// gen_labels.go - writes a pprof profile.proto by hand (the standard library
// only: protobuf's wire format is a few lines), the way Go's runtime/pprof
// lays it out (samples first, then mappings, locations, functions and the
// string table), with what runtime/pprof never writes: numeric "tid" and
// "pid" labels, several processes, and locations with inlined lines.
// t/data/pprof/labels.prof comes from
//
//	go run gen_labels.go labels.prof 400 1
//
// and bench/race.pl makes its large CPU profile (about 50 MB) with
//
//	go run gen_labels.go large-cpu.pb.gz 7000000 1 20000 0
//
// (arguments: output, samples, seed, then optionally POOL: each sample takes
// one of POOL stacks drawn first, as a long profile repeats its stacks (0:
// every sample draws its own), and LABELS: 0 for none, as a Go CPU profile
// without pprof.Do has).  Gzipped, as pprof writes it.
package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"strconv"
)

type buf []byte

func (b *buf) varint(v uint64) {
	for v >= 0x80 {
		*b = append(*b, byte(v)|0x80)
		v >>= 7
	}
	*b = append(*b, byte(v))
}
func (b *buf) tag(field, wt int)     { b.varint(uint64(field<<3 | wt)) }
func (b *buf) u(field int, v uint64) { b.tag(field, 0); b.varint(v) }
func (b *buf) bytes(field int, d []byte) {
	b.tag(field, 2)
	b.varint(uint64(len(d)))
	*b = append(*b, d...)
}
func (b *buf) packed(field int, v []uint64) {
	var p buf
	for _, x := range v {
		p.varint(x)
	}
	b.bytes(field, p)
}

var strs = []string{""}
var strIndex = map[string]uint64{"": 0}

func str(s string) uint64 {
	if i, ok := strIndex[s]; ok {
		return i
	}
	strIndex[s] = uint64(len(strs))
	strs = append(strs, s)
	return strIndex[s]
}

// a tiny deterministic generator (xorshift), so the file is the same each run
var seed uint64

func rnd(n int) int {
	seed ^= seed << 13
	seed ^= seed >> 7
	seed ^= seed << 17
	return int(seed % uint64(n))
}

const nfuncs = 40

func main() {
	out := os.Args[1]
	nsamples, _ := strconv.Atoi(os.Args[2])
	s, _ := strconv.Atoi(os.Args[3])
	seed = uint64(s)*2654435761 + 88172645463325252
	pool, labels := 0, true
	if len(os.Args) > 5 {
		pool, _ = strconv.Atoi(os.Args[4])
		labels = os.Args[5] != "0"
	}
	f, err := os.Create(out)
	if err != nil {
		panic(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	zw := gzip.NewWriter(bw)
	var head buf
	vt := func(field int, t, u string) {
		var v buf
		v.u(1, str(t))
		v.u(2, str(u))
		head.bytes(field, v)
	}
	vt(1, "samples", "count")
	vt(1, "cpu", "nanoseconds")
	zw.Write(head)
	const period = 10000000
	// locations 1..nfuncs: function i at a line; every 7th also holds an
	// inlined callee (function i+1), listed first, as pprof stores inlining
	kTid, kPid, kThread := str("tid"), str("pid"), str("thread")
	stack := func() []uint64 {
		depth := 3 + rnd(12)
		locs := make([]uint64, depth)
		at := 1 + rnd(nfuncs)
		for d := depth - 1; d >= 0; d-- { // root last
			locs[d] = uint64(at)
			at = 1 + (at*7+rnd(3))%nfuncs
		}
		return locs
	}
	stacks := make([][]uint64, pool)
	for i := range stacks {
		stacks[i] = stack()
	}
	for i := 0; i < nsamples; i++ {
		var sm buf
		var locs []uint64
		if pool > 0 {
			locs = stacks[rnd(pool)]
		} else {
			locs = stack()
		}
		sm.packed(1, locs)
		n := uint64(1 + rnd(3))
		sm.packed(2, []uint64{n, n * period})
		if !labels {
			var rec buf
			rec.bytes(2, sm)
			zw.Write(rec)
			continue
		}
		tid := 100 + rnd(4)
		var l buf
		l.u(1, kTid)
		l.u(3, uint64(tid))
		sm.bytes(3, l)
		var p buf
		p.u(1, kPid)
		p.u(3, uint64(4000+tid%2))
		sm.bytes(3, p)
		if tid == 103 { // one thread also has a name: the thread label wins over tid
			var t buf
			t.u(1, kThread)
			t.u(2, str("io-loop"))
			sm.bytes(3, t)
		}
		var rec buf
		rec.bytes(2, sm)
		zw.Write(rec)
	}
	var tail buf
	var m buf
	m.u(1, 1)
	m.u(2, 0x400000)
	m.u(3, 0x800000)
	m.u(5, str("/usr/local/bin/gen_labels"))
	m.u(7, 1)
	m.u(8, 1)
	m.u(9, 1)
	m.u(10, 1)
	tail.bytes(3, m)
	for i := 1; i <= nfuncs; i++ {
		var lc buf
		lc.u(1, uint64(i))
		lc.u(2, 1)
		lc.u(3, uint64(0x401000+i*64))
		if i%7 == 0 {
			var ln buf
			ln.u(1, uint64(i%nfuncs+1))
			ln.u(2, uint64(200+i))
			lc.bytes(4, ln)
		}
		var ln buf
		ln.u(1, uint64(i))
		ln.u(2, uint64(10*i+3))
		lc.bytes(4, ln)
		tail.bytes(4, lc)
	}
	for i := 1; i <= nfuncs; i++ {
		var fn buf
		name := fmt.Sprintf("example.com/gen/pkg%d.Func%d", i%5, i)
		if i%9 == 0 {
			name = fmt.Sprintf("example.com/gen/pkg%d.(*T).Method%d", i%5, i)
		}
		fn.u(1, uint64(i))
		fn.u(2, str(name))
		fn.u(3, str(name))
		fn.u(4, str(fmt.Sprintf("/src/gen/pkg%d/file%d.go", i%5, i%3)))
		fn.u(5, uint64(10*i))
		tail.bytes(5, fn)
	}
	str("/usr/local/bin/gen_labels")
	// the string table, then the scalars
	for _, s := range strs {
		tail.bytes(6, []byte(s))
	}
	tail.u(9, 1700000000000000000)
	tail.u(10, uint64(nsamples)*period/4)
	var pt buf
	pt.u(1, str("cpu"))
	pt.u(2, str("nanoseconds"))
	tail.bytes(11, pt)
	tail.u(12, period)
	zw.Write(tail)
	zw.Close()
	bw.Flush()
	f.Close()
}
