#!/usr/bin/env python3
"""For every example and each of zero-weight-update-sharding's modes, the
figures of zero-report (collectives, bytes per rank, model state) of the
example as written must equal those of its three linalg forms. Prints one
line per comparison; exits 1 at the first difference, or if a sharded
example reports no collective.

  compare-forms.py ZERO_OPT EXAMPLES_DIR

zero-opt starts in about 0.1 s (loading libMLIR and libLLVM), so the
programs go through it in batches, as the chunks of one --split-input-file
run: three runs make the forms of every example, and one run per mode and
pipeline reports on every example in every form (zero-report's JSON, a
document per chunk)."""

import json
import os
import subprocess
import sys

FORMS = [
    "--convert-elementwise-to-linalg",
    "--convert-elementwise-to-linalg --linalg-fuse-elementwise-ops",
    "--convert-elementwise-to-linalg --linalg-fuse-elementwise-ops "
    "--linalg-generalize-named-ops",
]
MODES = ["", "defer-all-gather", "stage=3 shard-function-boundary"]
SPLIT = "// -----"


def zero_opt(zero_opt_path, args, chunks):
    """zero-opt ARGS over `chunks` as one --split-input-file input; its
    standard output."""
    run = subprocess.run(
        [zero_opt_path, "--split-input-file", "--output-split-marker=" + SPLIT]
        + args,
        input=("\n%s\n" % SPLIT).join(chunks),
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        sys.exit("compare-forms: zero-opt %s failed:\n%s" %
                 (" ".join(args), run.stderr))
    return run.stdout


def json_documents(text):
    """The JSON documents of `text`, one after another."""
    decoder, documents, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return documents
        document, at = decoder.raw_decode(text, at)
        documents.append(document)


def figures(report):
    """What the comparison holds equal: each function's collectives in
    total, and its model state."""
    return [(f["function"], f["total"], f["model_state_bytes"])
            for f in report["functions"]]


def main():
    zero_opt_path, examples_dir = sys.argv[1:3]
    names = sorted(n for n in os.listdir(examples_dir) if n.endswith(".mlir"))
    given = []
    for name in names:
        with open(os.path.join(examples_dir, name)) as f:
            given.append(f.read())
    forms = []
    for form in FORMS:
        chunks = zero_opt(zero_opt_path, form.split(), given).split(SPLIT)
        if len(chunks) != len(given):
            sys.exit("compare-forms: %s gave %d programs for %d" %
                     (form, len(chunks), len(given)))
        forms.append(chunks)

    # A one-device program annotated with shard.shard goes through MLIR's
    # own data-parallel flow first (zero-data-parallel); the rest are zero's
    # style.
    def pipeline_of(i):
        return ("zero-data-parallel" if "shard.shard" in given[i] else
                "zero-weight-update-sharding")

    for mode in MODES:
        reports = {}
        for pipeline in sorted({pipeline_of(i) for i in range(len(names))}):
            members = [i for i in range(len(names)) if pipeline_of(i) == pipeline]
            # Each example as written, then in each form.
            chunks = [given[i] for i in members]
            for form in forms:
                chunks += [form[i] for i in members]
            documents = json_documents(zero_opt(
                zero_opt_path,
                ["--%s=%s" % (pipeline, mode), "--zero-report=format=json",
                 "-o", os.devnull], chunks))
            if len(documents) != len(chunks):
                sys.exit("compare-forms: %d reports for %d programs" %
                         (len(documents), len(chunks)))
            for k, i in enumerate(members):
                reports[i] = [documents[k + j * len(members)]
                              for j in range(len(FORMS) + 1)]
        for i, name in enumerate(names):
            expected = figures(reports[i][0])
            if not any(total["count"] > 0 for _, total, _ in expected):
                print("no collective: %s [%s]" % (name, mode))
                return 1
            for form, report in zip(FORMS, reports[i][1:]):
                got = figures(report)
                if got != expected:
                    print("differs: %s [%s] after %s" % (name, mode, form))
                    print("  as written: %s\n  in the form: %s" %
                          (expected, got))
                    return 1
                print("same: %s [%s] after %s" % (name, mode, form))
    return 0


if __name__ == "__main__":
    sys.exit(main())
