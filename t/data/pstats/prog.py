import threading
def fib(n):
    return n if n < 2 else fib(n-1) + fib(n-2)
def even(n):
    return True if n == 0 else odd(n-1)
def odd(n):
    return False if n == 0 else even(n-1)
class Shape:
    def area(self):
        return sum(i*i for i in range(200))
def work():
    s = 0
    for i in range(30):
        s += Shape().area()
        even(15)
    return s + fib(12) + len(sorted([3,1,2]))
def main():
    work()
    t = threading.Thread(target=work); t.start(); t.join()
main()
