"""Communication hidden in a zero trace: the share of each rank's
communication-track time (collectives on the device) that ran while its
computation track (kernels and cuBLAS calls on the device; on a CPU trace,
the host's computation) was busy.

    python3 hidden.py trace.json [trace.json ...]
"""
import json
import sys


def union(spans):
    merged = []
    for begin, end in sorted(spans):
        if merged and begin <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([begin, end])
    return merged


def overlap(span, merged):
    begin, end = span
    return sum(max(0.0, min(end, e) - max(begin, b)) for b, e in merged)


def hidden(path):
    events = json.load(open(path))["traceEvents"]
    ranks = {}
    for e in events:
        # The host's blocked time (a CPU trace's "wait ..." and "start ...")
        # is not computation.
        if e.get("ph") != "X" or (
            e["tid"] == 0 and e["name"].split(" ")[0] in ("wait", "start")
        ):
            continue
        tracks = ranks.setdefault(e["pid"], ([], []))
        tracks[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    total = covered = 0.0
    for compute, communication in ranks.values():
        busy = union(compute)
        for span in communication:
            total += span[1] - span[0]
            covered += overlap(span, busy)
    return total, covered


for path in sys.argv[1:]:
    total, covered = hidden(path)
    share = 100 * covered / total if total else 0
    print(f"{path}: communication {total / 1e3:.3f} ms over all ranks, "
          f"{share:.0f}% of it hidden under computation")
