import sys
def load(p):
    out = {}
    for line in open(p):
        parts = line.rstrip("\n").split("\t")
        cat, q, count = parts[0], parts[1], parts[2]
        ids = parts[3].split(",") if len(parts) > 3 and parts[3] else []
        scores = parts[4].split(",") if len(parts) > 4 and parts[4] else []
        out[(cat, q)] = (count, ids, scores)
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
counts = tops = scored = 0
for key, (ca, ia, sa) in a.items():
    if key not in b: continue
    cb, ib, sb = b[key]
    counts += ca != cb
    scored += [float(x) for x in sa] != [float(x) for x in sb]
    # ids equal up to order among equal scores; the last score's group may be cut at 10
    last = sa[-1] if sa else None
    ga = sorted((s, i) for s, i in zip(sa, ia) if s != last)
    gb = sorted((s, i) for s, i in zip(sb, ib) if s != last)
    tops += ga != gb
print(f"{len(a)} queries: {counts} hit counts differ, {scored} top-10 score lists differ, {tops} top-10s differ beyond ties")
