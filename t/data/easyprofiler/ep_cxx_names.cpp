// ep_cxx_names.cpp -- C++ names in EasyProfiler blocks: an operator, templates,
// a namespace. Usage: ep_cxx_names OUT.prof
#include <easy/profiler.h>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>

static volatile unsigned long g_sink = 0;
static void spin_us(int us) {
    auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count() < us)
        g_sink = g_sink + 1;
}

struct T { int v; };

std::ostream& operator<<(std::ostream& os, const T& t) {
    EASY_BLOCK("operator<<(std::ostream&, const T&)");
    spin_us(30);
    return os << t.v;
}

template <class X> X biggest(X a, X b) {
    EASY_BLOCK("biggest<std::string>(std::string, std::string)");
    spin_us(20);
    return a < b ? b : a;
}

namespace ns {
template <class X> struct Box {
    X x;
    X get() const {
        EASY_BLOCK("ns::Box<std::pair<int, int>>::get() const");
        spin_us(10);
        return x;
    }
};
}

int main(int argc, char** argv) {
    if (argc < 2) { std::fprintf(stderr, "usage: %s OUT.prof\n", argv[0]); return 2; }
    EASY_PROFILER_ENABLE;
    EASY_MAIN_THREAD;
    for (int i = 0; i < 20; ++i) {
        EASY_BLOCK("Frame");
        std::ostringstream s;
        s << T{i};
        biggest(std::string("a"), std::string("b"));
        ns::Box<std::pair<int, int>> b{{i, i}};
        b.get();
    }
    unsigned n = profiler::dumpBlocksToFile(argv[1]);
    std::printf("dumped %u blocks\n", n);
    return 0;
}
