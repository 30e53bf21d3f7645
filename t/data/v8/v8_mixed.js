// t/data/v8/v8_mixed.js: profiled with
//   node --cpu-prof --cpu-prof-dir=. --cpu-prof-name=v8_mixed.cpuprofile --cpu-prof-interval 500 v8_mixed.js
// named functions, an anonymous function, recursion, idle time (setTimeout)
// and garbage-collector pressure.
'use strict';

function fib(n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

function churn(rounds) {
    let keep = [];
    for (let i = 0; i < rounds; i++) {
        keep.push({ i, s: 'x'.repeat(64) + i, a: new Array(32).fill(i) });
        if (keep.length > 2000)
            keep = [];
    }
    return keep.length;
}

class Shape {
    constructor(n) { this.n = n; }
    area() {
        let s = 0;
        for (let i = 0; i < this.n; i++)
            s += Math.sqrt(i) * Math.sin(i);
        return s;
    }
}

const spin = function (ms) {
    const end = Date.now() + ms;
    let x = 0;
    while (Date.now() < end)
        x += Math.random();
    return x;
};

function main() {
    fib(24);
    churn(150000);
    new Shape(400000).area();
    [1, 2, 3].map(function (v) { return spin(15) + v; });
    setTimeout(() => {
        fib(22);
        churn(60000);
        setTimeout(() => spin(20), 40);
    }, 60);
}

main();
