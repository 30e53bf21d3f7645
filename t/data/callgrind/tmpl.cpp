#include <cstdio>
#include <vector>
#include <thread>
namespace geo {
template <typename T> struct Box {
    T w, h;
    T area() const { T s = 0; for (int i = 0; i < 50; i++) s += w * h + i; return s; }
};
class Shape { public: virtual ~Shape() {} virtual double area() const = 0; };
class Sq : public Shape { double s; public: Sq(double x) : s(x) {} double area() const override { return s * s; } };
}
static long busy(int k) { long t = 0; for (int i = 0; i < k; i++) { geo::Box<long> b{i, 2}; t += b.area(); } return t; }
int main() {
    std::vector<geo::Shape *> v;
    for (int i = 0; i < 100; i++) v.push_back(new geo::Sq(i));
    double a = 0;
    for (auto *s : v) a += s->area();
    geo::Box<double> bd{1.5, 2.0};
    long r = 0;
    std::thread t1([&] { r += busy(300); });
    std::thread t2([&] { r += busy(200); });
    t1.join(); t2.join();
    std::printf("%f %f %ld\n", a, bd.area(), r);
    for (auto *s : v) delete s;
}
