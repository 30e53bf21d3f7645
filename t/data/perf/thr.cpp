#include <pthread.h>
#include <stdio.h>
#include <vector>
#include <map>
#include <string>
static volatile unsigned long sink;
namespace geo {
template <typename T> struct Box {
    std::vector<T> v;
    __attribute__((noinline)) void fill(int n) { for (int i = 0; i < n; i++) v.push_back((T)i); }
    __attribute__((noinline)) T sum() const { T s = 0; for (auto x : v) s += x; return s; }
    T operator()(int k) const { T s = 0; for (int r = 0; r < k; r++) s += sum(); return s; }
};
}
namespace {
__attribute__((noinline)) unsigned long hashy(const std::string &s, int rounds)
{
    unsigned long h = 5381;
    for (int r = 0; r < rounds; r++) for (char c : s) h = h * 33 + (unsigned char)c;
    return h;
}
}
static inline __attribute__((always_inline)) unsigned long inl_mix(unsigned long x) { for (int i = 0; i < 200; i++) x = x * 6364136223846793005ul + 1; return x; }
__attribute__((noinline)) unsigned long use_inline(int n) { unsigned long x = 1; for (int i = 0; i < n; i++) x = inl_mix(x); return x; }
static void *worker(void *arg)
{
    long id = (long)arg;
    if (id == 0) { geo::Box<double> b; b.fill(2000); sink += (unsigned long)b(40000); }
    else if (id == 1) { std::map<int, int> m; for (int i = 0; i < 300000; i++) m[i * 7 % 100003] += i; sink += m.size(); sink += hashy("hello world, this is perf", 2000000); }
    else sink += use_inline(400000);
    return NULL;
}
int main()
{
    pthread_t t[3];
    for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    printf("%lu\n", sink);
    return 0;
}
