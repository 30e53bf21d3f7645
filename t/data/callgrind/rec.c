#include <stdio.h>
#include <stdlib.h>
static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int odd(int n);
static int even(int n) { return n == 0 ? 1 : odd(n - 1); }
static int odd(int n) { return n == 0 ? 0 : even(n - 1); }
static inline int sq(int x) { return x * x; }
__attribute__((noinline)) static long work(int k) { long s = 0; for (int i = 0; i < k; i++) s += sq(i) + even(i % 17); return s; }
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 18;
    printf("%d %ld\n", fib(n), work(1000));
    return 0;
}
