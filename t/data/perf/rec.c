#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
static volatile unsigned long sink;
__attribute__((noinline)) unsigned long fib(int n) { return n < 2 ? (unsigned long)n : fib(n - 1) + fib(n - 2); }
__attribute__((noinline)) void spin(long n) { long i; for (i = 0; i < n; i++) sink += i * 7; }
__attribute__((noinline)) void work_child(void) { spin(60000000); sink += fib(27); }
__attribute__((noinline)) void work_parent(void) { sink += fib(30); spin(30000000); }
int main(void)
{
    pid_t p = fork();
    if (p == 0) { work_child(); _exit(0); }
    work_parent();
    waitpid(p, NULL, 0);
    printf("%lu\n", sink);
    return 0;
}
