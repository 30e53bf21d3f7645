// bench/make-cpuprofile.js - a large V8 .cpuprofile for bench/race.pl,
// synthesized at bench time (never committed): the shape node --cpu-prof
// writes (nodes, startTime, endTime, samples, timeDeltas), a tree of a few
// thousand nodes over 600 functions in 24 scripts, and as many samples as it
// takes to reach the size asked for, written as they are made (this program's
// own memory stays small).  Deterministic (a seeded PRNG).
//   node bench/make-cpuprofile.js OUT [MB]      (default 100 MB)
'use strict';
const fs = require('fs');
const out = process.argv[2];
const mb = Number(process.argv[3] || 100);
if (!out) { console.error('usage: node make-cpuprofile.js OUT [MB]'); process.exit(2); }
let seed = 0x9e3779b9;
function rnd(n) { seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0; return seed % n; }

const nodes = [];
function node(name, url, line, col, parent) {
    const n = { id: nodes.length + 1, callFrame: { functionName: name, scriptId: String(url ? 1 + (line % 24) : 0), url,
        lineNumber: line, columnNumber: col }, hitCount: 0, children: [] };
    nodes.push(n);
    if (parent) parent.children.push(n.id);
    return n;
}
const root = node('(root)', '', -1, -1, null);
const special = ['(program)', '(idle)', '(garbage collector)'].map(s => node(s, '', -1, -1, root));
const funcs = [];
for (let i = 0; i < 600; i++)
    funcs.push([i % 9 === 0 ? '' : 'fn' + i, 'file:///srv/app/lib/mod' + (i % 24) + '.js', 10 + i * 3, 4 + i % 17]);
const leaves = [];
function grow(parent, depth) {
    const kids = depth < 3 ? 6 : depth > 30 ? 0 : rnd(3);
    if (!kids) { leaves.push(parent); return; }
    for (let k = 0; k < kids; k++) {
        const f = funcs[rnd(funcs.length)];
        grow(node(f[0], f[1], f[2], f[3], parent), depth + 1);
    }
    if (rnd(4) === 0) leaves.push(parent);
}
while (nodes.length < 3000) grow(node('main', 'file:///srv/app/main.js', 0, 0, root), 1);
const pick = leaves.concat(special, special);

// pass 1: the samples (written), keeping only how many; pass 2: as many deltas
const fd = fs.openSync(out, 'w');
const head = '{"nodes":' + JSON.stringify(nodes) + ',"startTime":1000000000,"endTime":';
const target = mb * 1e6;
// ~9.3 bytes per sample (an id and a delta): the count that reaches the size
const count = Math.max(1, Math.floor((target - head.length) / 9.3));
let buf = [];
let cur = pick[0].id;
fs.writeSync(fd, head);
let total = 0;
const deltas = new Uint16Array(1 << 16);
for (let i = 0; i < deltas.length; i++) deltas[i] = 400 + rnd(1200);
for (let i = 0; i < count; i++) total += deltas[i & 0xffff];
fs.writeSync(fd, String(1000000000 + total + 1000) + ',"samples":[');
for (let i = 0; i < count; i++) {
    if (rnd(5) === 0) cur = pick[rnd(pick.length)].id;   // runs of one node, as real profiles have
    buf.push(cur);
    if (buf.length === 65536 || i === count - 1) { fs.writeSync(fd, (i >= 65536 ? ',' : '') + buf.join(',')); buf = []; }
}
fs.writeSync(fd, '],"timeDeltas":[');
for (let i = 0; i < count; i++) {
    buf.push(deltas[i & 0xffff]);
    if (buf.length === 65536 || i === count - 1) { fs.writeSync(fd, (i >= 65536 ? ',' : '') + buf.join(',')); buf = []; }
}
fs.writeSync(fd, ']}\n');
fs.closeSync(fd);
