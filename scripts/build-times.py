#!/usr/bin/env python3
"""The build's cost from ninja's log: the CPU-seconds of every target's
latest build, summed, and the slowest translation units.

  scripts/build-times.py [BUILD_DIR] [--top N]

Measure a fresh build without ccache's hits, as the build-time goals are
stated:

  rm -rf build && CCACHE_DISABLE=1 bash scripts/build.sh && scripts/build-times.py

The log keeps every build's entries; each target counts once, by its latest
one. A target's time is its wall time under ninja's parallelism, so the sum
is what the build costs across all jobs (CPU-seconds when each job keeps one
core busy)."""

import argparse
import os
import sys


def latest_entries(log_path):
    """{output: seconds} from the latest entry of each output."""
    latest = {}
    with open(log_path) as log:
        header = log.readline()
        if not header.startswith("# ninja log v"):
            sys.exit("build-times: %s is not a ninja log" % log_path)
        for number, line in enumerate(log, start=2):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 5:
                sys.exit("build-times: %s:%d: expected 5 fields, got %d" %
                         (log_path, number, len(fields)))
            start, end, _, output, _ = fields
            latest[output] = (int(end) - int(start)) / 1000.0
    return latest


def source_of(output):
    """The source of an object file, DIR/CMakeFiles/TARGET.dir/FILE.o: as
    DIR/FILE, relative to the source tree (paths CMake shortened stay as
    they are)."""
    directory, marker, rest = output.partition("CMakeFiles/")
    if not marker or ".dir/" not in rest:
        return output
    return directory + rest.split(".dir/", 1)[1][:-len(".o")]


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("build", nargs="?", default=os.path.join(root, "build"))
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    log_path = os.path.join(args.build, ".ninja_log")
    if not os.path.exists(log_path):
        sys.exit("build-times: no %s: build first (scripts/build.sh)" %
                 log_path)
    times = latest_entries(log_path)
    units = {o: s for o, s in times.items() if o.endswith(".o")}
    print("%d targets, %.0f s in all (%d translation units, %.0f s)" %
          (len(times), sum(times.values()), len(units), sum(units.values())))
    print("slowest translation units:")
    for output, seconds in sorted(units.items(), key=lambda i: -i[1])[:args.top]:
        print("  %7.1f s  %s" % (seconds, source_of(output)))


if __name__ == "__main__":
    main()
