import threading
import time

STOP = time.monotonic() + 1.5

class Tree:
    def __init__(self, depth):
        self.kids = [Tree(depth - 1) for _ in range(2)] if depth else []

    def count(self):
        return 1 + sum(k.count() for k in self.kids)

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def builder():
    n = 0
    while time.monotonic() < STOP:
        n += Tree(9).count()
    return n

def worker():
    square = lambda x: x * x
    n = 0
    while time.monotonic() < STOP:
        n += sum(square(i) for i in range(2000)) + fib(12)
    return n

def main():
    ts = [threading.Thread(target=f, name=f.__name__) for f in (builder, worker)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("done")

if __name__ == "__main__":
    main()
