# truth of a pstats file: what pstats.Stats (this interpreter's) loads from it
import json, marshal, pstats, sys, platform
def fn(k):
    f = k[2]
    return [k[0], k[1], f if isinstance(f, str) else f.co_name]
for path in sys.argv[1:]:
    st = pstats.Stats(path).stats
    funcs, edges = [], []
    for k, v in st.items():
        if len(k) != 3:
            continue
        cc, nc, tt, ct, callers = v
        funcs.append(fn(k) + [cc, nc, tt, ct])
        for ck, cv in callers.items():
            edges.append(fn(k) + fn(ck) + (list(cv) if isinstance(cv, tuple) else [cv]))
    json.dump({"python": platform.python_version(), "sampled": ("__sampled__",) in marshal.load(open(path, "rb")),
               "functions": funcs, "edges": edges}, open(path + ".truth.json", "w"), indent=0)
