// t/data/v8/v8_recursion.js: profiled with
//   node --cpu-prof --cpu-prof-dir=. --cpu-prof-name=v8_recursion.cpuprofile --cpu-prof-interval 100 v8_recursion.js
// mutual and direct recursion, a closure returned by a factory (anonymous),
// a method, allocation-heavy code (GC) and timers (idle).
'use strict';

function ackermann(m, n) {
    if (m === 0) return n + 1;
    if (n === 0) return ackermann(m - 1, 1);
    return ackermann(m - 1, ackermann(m, n - 1));
}

function isEven(n) { return n === 0 ? true : isOdd(n - 1); }
function isOdd(n) { return n === 0 ? false : isEven(n - 1); }

function makeSorter() {
    return function (arr) {
        return arr.slice().sort((a, b) => a - b);
    };
}

class Tree {
    static build(depth) {
        return depth === 0 ? null : { l: Tree.build(depth - 1), r: Tree.build(depth - 1), v: 'n'.repeat(8) };
    }
    static count(t) { return t ? 1 + Tree.count(t.l) + Tree.count(t.r) : 0; }
}

function work() {
    ackermann(2, 120);
    for (let i = 0; i < 3000; i++) isEven(200 + (i % 7));
    const sort = makeSorter();
    for (let i = 0; i < 40; i++) sort(Array.from({ length: 5000 }, (_, k) => (k * 7919) % 5003));
    for (let i = 0; i < 6; i++) Tree.count(Tree.build(15));
}

work();
setTimeout(() => { work(); setTimeout(work, 30); }, 50);
