#!/usr/bin/env python3
"""zero's fuzz harness: mutants of real inputs through every zero pass.

Seeds are zero's examples and the test suite's inputs (each case of a
--split-input-file test alone). A mutant applies one to three mutations with
a fixed seed: a dimension changed everywhere or once, a mesh shape, an
element type changed everywhere or once, a reduction kind, a collective's
axes, a deleted line. Each mutant runs through `zero-opt` with one of the
registered zero passes and pipelines (read from `zero-opt --help`, with the
options users run), and through the parser and verifier alone.

Rank-dependent mutants (--divergent) put one collective of a program under
control that differs between ranks: an `scf.if` on `zero.replica_index`, an
`scf.for` whose trip count it is, or an `scf.if` on whether this rank's
local gradient (an argument the collective reduces) is finite, as code that
skips a step on an inf does. Each must fail `zero-verify-collectives`; one
that passes is a finding (missed). The examples, as they are, must pass it;
one that fails is a finding too (false alarm).

A crash (a signal, an abort, LLVM's stack dump or an assertion) or a run past
--timeout is a finding. So is a miscompile: on a sample of mutants of the
examples that verify, `zero-run --equivalent-after` runs the program as given
and after a sharding pipeline on the same inputs, and any result that differs
is reported. A bad input that zero rejects with an error is not a finding.

Each finding is written to --out as the mutant and the command that shows it;
the exit status is 1 when there is one. The last line is the summary:

  zero-fuzz: M mutants (V verify), P zero-opt runs, E equivalence runs:
  C crash(es), T timeout(s), X miscompile(s), Y missed, Z false alarm(s)

zero-opt starts in about 0.14 s (loading libMLIR and libLLVM), so mutants
go through it --batch at a time, as the chunks of one --split-input-file
run: a chunk's output (empty when zero-opt rejected it) tells its outcome,
and a process that crashes or times out is run again one mutant at a time,
so that every finding names its mutant and its command. The
rank-dependent mutants go through zero-verify-collectives in batches too:
its errors name lines of the batch's file, which tell their mutant.

CI runs a few hundred mutants (test/Fuzz/fuzz.test); a long run is the same
command with more (docs/Testing.md).
"""

import argparse
import bisect
import os
import random
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

# Pipelines with the options users run; every other zero pass runs as is.
PIPELINE_VARIANTS = [
    "zero-weight-update-sharding",
    "zero-weight-update-sharding{defer-all-gather}",
    "zero-weight-update-sharding{overlap across-iterations}",
    "zero-weight-update-sharding{shard-function-boundary}",
    "zero-weight-update-sharding{stage=2}",
    "zero-weight-update-sharding{stage=3 shard-function-boundary}",
    "zero-weight-update-sharding{bucket-bytes=64}",
    "zero-weight-update-sharding{accumulate-locally}",
    "zero-data-parallel",
    "zero-to-llvm",
    "zero-to-llvm{gpu-loops}",
    "zero-to-nvvm{gpu-format=isa}",
    "zero-weight-update-sharding,zero-to-llvm",
    "zero-weight-update-sharding{shard-function-boundary offload=optimizer},"
    "zero-to-nvvm{gpu-format=isa}",
    "zero-weight-update-sharding{offload=params},zero-to-llvm{gpu-loops}",
]

# The rewrites whose equivalence zero-run checks, each with the options
# zero-run needs for it: host offload runs on the GPU's CPU replica, the
# program as given in the GPU's structure too.
GPU_REPLICA = ("--gpu-loops", "--gpu-loops-given")
EQUIVALENCE_PIPELINES = [
    ("zero-weight-update-sharding", ()),
    ("zero-weight-update-sharding{defer-all-gather}", ()),
    ("zero-weight-update-sharding{overlap}", ()),
    ("zero-weight-update-sharding{stage=3 shard-function-boundary}", ()),
    ("zero-weight-update-sharding{bucket-bytes=64}", ()),
    ("zero-weight-update-sharding{shard-function-boundary offload=optimizer}",
     GPU_REPLICA),
    ("zero-weight-update-sharding{offload=params}", GPU_REPLICA),
]

CRASH_SIGNS = ("Stack dump:", "PLEASE submit a bug report", "LLVM ERROR:",
               "Assertion `", "UNREACHABLE executed", "terminate called",
               "AddressSanitizer", "runtime error:")
# Between the mutants of one zero-opt process (--split-input-file).
SPLIT = "// zero-fuzz-split"
MISCOMPILE_SIGNS = ("element(s) differ", "types differ after the pipeline")

DIMS = [0, 1, 2, 3, 5, 8, 16, 64]
MESHES = ["[1]", "[2]", "[3]", "[4]", "[8]", "[2, 2]", "[2, 4]", "[0]",
          "[1, 1]", "[4, 2]"]
TYPES = ["f32", "f16", "bf16", "f64", "i32", "i8", "i1", "index"]
KINDS = ["sum", "mean", "max", "min"]
AXES = ["[0]", "[1]", "[0, 1]", "[1, 0]", "[]", "[2]"]

SHAPE_DIM = re.compile(r"(?<=[<x])(\d+)(?=x)")
MESH_SHAPE = re.compile(r"(?<=shape = )\[[\d, ]*\]")
ELEMENT_TYPE = re.compile(r"\b(f16|bf16|f32|f64|i1|i8|i32|i64)\b")
REDUCTION = re.compile(r"(?<=reduce = )(sum|mean|max|min)\b")
AXES_LIST = re.compile(r"(?<=axes = )\[[\d, ]*\]")
COLLECTIVE_LINE = re.compile(
    r"^(?P<indent>\s*)(?P<result>%[\w.$-]+) = (?P<op>zero\.(?:all_reduce|"
    r"reduce_scatter|all_gather)) (?P<input>%[\w.$-]+) on (?P<mesh>@[\w]+)"
    r"(?P<rest>.*) : (?P<types>[^:\n]+)$", re.M)
MESH_DECL = re.compile(r"zero\.mesh (@\w+)\(shape = \[([\d, ]*)\]\)")
FUNC_ARGS = re.compile(r"func\.func @\w+\((.*?)\)\s*(?:->|\{)", re.S)
STATIC_TENSOR = re.compile(r"^tensor<((?:\d+x)*)(f16|bf16|f32|f64)>$")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zero-opt", required=True)
    p.add_argument("--zero-run", help="enables the equivalence runs")
    p.add_argument("--root", required=True, help="zero's source tree")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mutants", type=int, default=300)
    p.add_argument("--passes", type=int, default=3,
                   help="zero passes or pipelines each mutant runs through")
    p.add_argument("--equivalence-runs", type=int, default=16)
    p.add_argument("--divergent", type=int, default=0,
                   help="rank-dependent mutants that zero-verify-collectives "
                        "must reject")
    p.add_argument("--timeout", type=float, default=60,
                   help="seconds one run may take before it is a finding")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--batch", type=int, default=20,
                   help="mutants per zero-opt process (--split-input-file); "
                        "a process that crashes or times out is run again "
                        "one mutant at a time")
    p.add_argument("--unmutated", action="store_true",
                   help="also run every seed as written through every zero "
                        "pass and pipeline")
    p.add_argument("--out", default="zero-fuzz-findings")
    return p.parse_args()


def read_seeds(root):
    """(name, text, runnable) for each example and each test case."""
    seeds = []
    examples = os.path.join(root, "examples")
    for name in sorted(os.listdir(examples)):
        if name.endswith(".mlir"):
            with open(os.path.join(examples, name)) as f:
                seeds.append(("examples/" + name, f.read(), True))
    for folder, _, files in sorted(os.walk(os.path.join(root, "test"))):
        for name in sorted(files):
            if not name.endswith(".mlir"):
                continue
            path = os.path.join(folder, name)
            with open(path) as f:
                cases = f.read().split("\n// -----\n")
            rel = os.path.relpath(path, root)
            for i, case in enumerate(cases):
                seeds.append((f"{rel}#{i}", case, False))
    return seeds


def zero_passes(zero_opt):
    """Every registered zero pass and pipeline, as zero-opt --help lists."""
    text = subprocess.run([zero_opt, "--help"], capture_output=True,
                          text=True, check=True).stdout
    names = set(re.findall(r"^      --((?:zero-|convert-shard-to-zero)[\w-]*)",
                           text, re.M))
    # zero-report prints for people, and the pipelines get their variants.
    names -= {"zero-weight-update-sharding", "zero-data-parallel",
              "zero-to-llvm", "zero-to-nvvm"}
    return sorted(names) + PIPELINE_VARIANTS


def replace_one(pattern, text, rng, choices):
    matches = list(pattern.finditer(text))
    if not matches:
        return None
    m = rng.choice(matches)
    return text[:m.start()] + rng.choice(choices) + text[m.end():]


# A dense array of `index` (`array<index: 0>`, from an i64 array's element
# type mutated) crashes MLIR 22's own parser (upstream mlir-opt too), before
# any zero code runs: such a mutant finds nothing of zero's.
UPSTREAM_PARSER_CRASH = re.compile(r"\barray<index\s*[:>]")


def mutate(text, rng):
    """One mutation of `text` and its description; None when none applies,
    or when the mutant is one MLIR's parser crashes on."""
    result = mutate_once(text, rng)
    if result and UPSTREAM_PARSER_CRASH.search(result[0]):
        return None
    return result


def mutate_once(text, rng):
    kind = rng.choice(["dim-all", "dim-one", "mesh", "type-all", "type-one",
                       "reduction", "axes", "delete-line"])
    if kind == "dim-all":
        dims = sorted(set(SHAPE_DIM.findall(text)))
        if not dims:
            return None
        old, new = rng.choice(dims), str(rng.choice(DIMS))
        return SHAPE_DIM.sub(lambda m: new if m.group(1) == old
                             else m.group(1), text), f"dimension {old} -> {new}"
    if kind == "dim-one":
        out = replace_one(SHAPE_DIM, text, rng, [str(d) for d in DIMS])
        return out and (out, "one dimension")
    if kind == "mesh":
        out = replace_one(MESH_SHAPE, text, rng, MESHES)
        return out and (out, "mesh shape")
    if kind == "type-all":
        types = sorted(set(ELEMENT_TYPE.findall(text)))
        if not types:
            return None
        old, new = rng.choice(types), rng.choice(TYPES)
        return re.sub(r"\b%s\b" % old, new, text), f"type {old} -> {new}"
    if kind == "type-one":
        out = replace_one(ELEMENT_TYPE, text, rng, TYPES)
        return out and (out, "one element type")
    if kind == "reduction":
        out = replace_one(REDUCTION, text, rng, KINDS)
        return out and (out, "reduction kind")
    if kind == "axes":
        out = replace_one(AXES_LIST, text, rng, AXES)
        return out and (out, "axes")
    lines = text.split("\n")
    code = [i for i, l in enumerate(lines)
            if l.strip() and not l.strip().startswith("//")]
    if not code:
        return None
    i = rng.choice(code)
    return "\n".join(lines[:i] + lines[i + 1:]), f"line {i + 1} deleted"


def divergent_mutant(text, rng):
    """`text` with one collective under control that differs between ranks,
    and how; None when the program has no collective on a mesh of several
    ranks."""
    meshes = {m.group(1): [int(d) for d in m.group(2).split(",") if d.strip()]
              for m in MESH_DECL.finditer(text)}
    # Not one a zero.async holds: its body is that collective alone.
    several = [m for m in COLLECTIVE_LINE.finditer(text)
               if any(d > 1 for d in meshes.get(m.group("mesh"), []))
               and "zero.async" not in text[text.rfind("\n", 0, max(
                   0, text.rfind("\n", 0, m.start()))):m.start()]]
    if not several:
        return None
    m = rng.choice(several)
    g = m.groupdict()
    types = [t.strip() for t in g["types"].split("->")]
    in_type, out_type = types[0], types[-1]
    inner = f"{g['op']} %zf_acc on {g['mesh']}{g['rest']} : {g['types']}"
    ind = g["indent"]
    kinds = ["if-rank"]
    if in_type == out_type:
        kinds.append("for-rank")
    # A local gradient: an argument of the function the collective reduces.
    start = text.rfind("func.func", 0, m.start())
    header = FUNC_ARGS.match(text, start) if start >= 0 else None
    params = re.findall(r"(%[\w.$-]+)\s*:", header.group(1)) if header else []
    tensor = STATIC_TENSOR.match(in_type)
    reducing = g["op"] in ("zero.all_reduce", "zero.reduce_scatter")
    if reducing and g["input"] in params and tensor and \
            "private" not in text[start:start + 40]:
        kinds.append("if-gradient")
    kind = rng.choice(kinds)
    rank = (f"{ind}%zf_rank = zero.replica_index on {g['mesh']} : index\n"
            f"{ind}%zf_c0 = arith.constant 0 : index\n")
    other = g["input"] if in_type == out_type else "%zf_empty"
    empty = ("" if in_type == out_type else
             f"{ind}  %zf_empty = tensor.empty() : {out_type}\n")
    if kind == "for-rank":
        code = (rank + f"{ind}%zf_c1 = arith.constant 1 : index\n"
                f"{ind}{g['result']} = scf.for %zf_i = %zf_c0 to %zf_rank "
                f"step %zf_c1 iter_args(%zf_acc = {g['input']}) -> "
                f"({out_type}) {{\n"
                f"{ind}  %zf_inner = {inner}\n"
                f"{ind}  scf.yield %zf_inner : {out_type}\n{ind}}}")
    else:
        if kind == "if-rank":
            cond = rank + (f"{ind}%zf_cond = arith.cmpi eq, %zf_rank, "
                           f"%zf_c0 : index\n")
        else:
            rank_of = tensor.group(1).count("x")
            index = ", ".join(["%zf_c0"] * rank_of)
            element = tensor.group(2)
            cond = (f"{ind}%zf_c0 = arith.constant 0 : index\n"
                    f"{ind}%zf_x = tensor.extract {g['input']}[{index}] : "
                    f"{in_type}\n"
                    f"{ind}%zf_cond = math.isfinite %zf_x : {element}\n")
        code = (cond + f"{ind}{g['result']} = scf.if %zf_cond -> "
                f"({out_type}) {{\n"
                f"{ind}  %zf_acc = tensor.cast {g['input']} : {in_type} to "
                f"{in_type}\n"
                f"{ind}  %zf_inner = {inner}\n"
                f"{ind}  scf.yield %zf_inner : {out_type}\n"
                f"{ind}}} else {{\n{empty}"
                f"{ind}  scf.yield {other} : {out_type}\n{ind}}}")
    return (text[:m.start()] + code + text[m.end():],
            f"{g['op']} at offset {m.start()} under {kind}")


def make_mutants(seeds, count, rng):
    # Half from the examples: the test cases outnumber them a hundredfold,
    # and only whole programs reach the lowering and the runs.
    examples = [s for s in seeds if s[2]]
    mutants = []
    while len(mutants) < count:
        name, text, runnable = rng.choice(examples if rng.random() < 0.5
                                          else seeds)
        done = []
        for _ in range(rng.randint(1, 3)):
            result = mutate(text, rng)
            if result:
                text, what = result
                done.append(what)
        if done:
            mutants.append((f"{name} ({', '.join(done)})", text, runnable))
    return mutants


def run_keeping_stdout(command, timeout):
    """'ok', 'error', 'crash' or 'timeout', the output (stdout and stderr),
    and stdout alone."""
    try:
        p = subprocess.run(command, capture_output=True, text=True,
                           timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout", "", ""
    output = p.stdout + p.stderr
    if p.returncode < 0 or p.returncode in (134, 139) or any(
            s in output for s in CRASH_SIGNS):
        return "crash", output, p.stdout
    return ("ok" if p.returncode == 0 else "error"), output, p.stdout


def run_split(command, texts, path, timeout):
    """Runs `command` ("MUTANT" in it stands for `path`) on `texts` as the
    chunks of one --split-input-file file written to `path`: the status, the
    output (stdout and stderr), and each text's own output, or None for them
    when the process crashed or timed out (it then says nothing of its other
    chunks) or printed another number of chunks. A rejected chunk prints
    nothing between its markers."""
    with open(path, "w") as f:
        f.write(("\n" + SPLIT + "\n").join(texts))
    real = [path if a == "MUTANT" else a for a in command] + [
        "--split-input-file=" + SPLIT, "--output-split-marker=" + SPLIT]
    status, output, stdout = run_keeping_stdout(real, timeout)
    chunks = (None if status in ("crash", "timeout") else
              stdout.split(SPLIT + "\n"))
    if chunks is not None and len(chunks) != len(texts):
        chunks = None
    return status, output, chunks


def run(command, timeout):
    """'ok', 'error', 'crash' or 'timeout', and the output."""
    status, output, _ = run_keeping_stdout(command, timeout)
    return status, output


class Findings:
    def __init__(self, out):
        self.out = out
        self.count = {"crash": 0, "timeout": 0, "miscompile": 0,
                      "missed": 0, "false alarm": 0}

    def add(self, kind, mutant, command, output):
        self.count[kind] += 1
        os.makedirs(self.out, exist_ok=True)
        n = sum(self.count.values())
        path = os.path.join(self.out, f"finding{n}.mlir")
        with open(path, "w") as f:
            f.write(mutant[1])
        shown = " ".join(path if a == "MUTANT" else a for a in command)
        print(f"zero-fuzz: {kind}: {mutant[0]}\n  {shown}")
        for line in output.splitlines()[-8:]:
            print("  | " + line)


def check_verification(args, rng, findings, workdir):
    """Runs zero-verify-collectives on --divergent rank-dependent mutants
    (each must be rejected) and on every example (each must pass). Returns
    (caught, not valid IR, examples clean)."""
    if not args.divergent:
        return 0, 0, 0
    seeds = read_seeds(args.root)
    candidates = [s for s in seeds if COLLECTIVE_LINE.search(s[1])]
    mutants = []
    while len(mutants) < args.divergent:
        name, text, runnable = rng.choice(candidates)
        result = divergent_mutant(text, rng)
        if result:
            mutants.append((f"{name} ({result[1]})", result[0], runnable))
    examples = [s for s in seeds if s[2]]
    jobs = list(enumerate(mutants + examples))
    VERIFY = [args.zero_opt, "MUTANT", "--zero-verify-collectives"]

    def verify_alone(index):
        path = os.path.join(workdir, f"v{index}.mlir")
        with open(path, "w") as f:
            f.write(jobs[index][1][1])
        real = [path if a == "MUTANT" else a for a in VERIFY]
        return index, VERIFY, run(real + ["-o", os.devnull], args.timeout)

    def verify(batch):
        """The outcome of each program of a batch: (index, command, (status,
        output)). Diagnostics name lines of the whole file, which tell their
        chunk; a rejected chunk that no error names, or a process that crashed
        or timed out, is run again alone."""
        number, members = batch
        path = os.path.join(workdir, f"vbatch{number}.mlir")
        texts = [jobs[i][1][1] for i in members]
        _, output, chunks = run_split(VERIFY, texts, path, args.timeout)
        if chunks is None:
            return [verify_alone(i) for i in members]
        starts, line = [], 1
        for text in texts:
            starts.append(line)
            line += text.count("\n") + 2
        errors = [[] for _ in members]
        for m in re.finditer(re.escape(path) + r":(\d+):\d+: error: (.*)",
                             output):
            at = bisect.bisect_right(starts, int(m.group(1))) - 1
            errors[at].append(m.group(2))
        results = []
        for at, (index, chunk) in enumerate(zip(members, chunks)):
            if chunk.strip():
                results.append((index, VERIFY, ("ok", "")))
            elif errors[at]:
                results.append((index, VERIFY, ("error", "\n".join(errors[at]))))
            else:
                results.append(verify_alone(index))
        return results

    caught = invalid = clean = 0
    batches = [(n, list(range(at, min(at + args.batch, len(jobs)))))
               for n, at in enumerate(range(0, len(jobs), args.batch))]
    with ThreadPoolExecutor(args.jobs) as pool:
        outcomes = [o for batch in pool.map(verify, batches) for o in batch]
        for index, command, (status, output) in outcomes:
            program = jobs[index][1]
            if status in ("crash", "timeout"):
                findings.add(status, program, command, output)
            elif index >= len(mutants):
                if status == "ok":
                    clean += 1
                else:
                    findings.add("false alarm", program, command, output)
            elif "is not issued alike on every rank" in output:
                caught += 1
            elif status == "ok":
                findings.add("missed", program, command, output)
            else:
                invalid += 1
    return caught, invalid, clean


def main():
    args = parse_args()
    rng = random.Random(args.seed)
    start = time.time()
    passes = zero_passes(args.zero_opt)
    seeds = read_seeds(args.root)
    mutants = make_mutants(seeds, args.mutants, rng)
    # Each mutant's pass is drawn now, so a run's findings depend on the
    # seed alone, not on the order the workers finish in.
    plans = [(m, rng.sample(passes, args.passes)) for m in mutants]
    # The seeds as written, each through every pass: what a user's own
    # inputs of these forms meet (a pass that drawing skips for a seed is
    # where a crash hides: zero-report read past a transpose of buffers).
    if args.unmutated:
        plans += [((f"{name} (as written)", text, runnable), passes)
                  for name, text, runnable in seeds]
    findings = Findings(args.out)
    workdir = os.path.join(args.out, "work")
    os.makedirs(workdir, exist_ok=True)

    # The commands every mutant goes through: the parser and verifier alone,
    # then each of its passes.
    commands = {(): [args.zero_opt, "MUTANT"]}
    for _, pass_names in plans:
        for name in pass_names:
            commands[(name,)] = [args.zero_opt, "MUTANT",
                                 f"--pass-pipeline=builtin.module({name})"]
    for index, (mutant, _) in enumerate(plans):
        with open(os.path.join(workdir, f"m{index}.mlir"), "w") as f:
            f.write(mutant[1])
    batches = []
    for key, command in commands.items():
        members = [i for i, (_, names) in enumerate(plans)
                   if not key or key[0] in names]
        for at in range(0, len(members), args.batch):
            batches.append((command, members[at:at + args.batch]))

    def alone(command, index):
        path = os.path.join(workdir, f"m{index}.mlir")
        real = [path if a == "MUTANT" else a for a in command]
        return run(real + ["-o", os.devnull], args.timeout)

    def check(job):
        """The outcome of each mutant of a batch under `command`: (index,
        command, (status, output)), and the processes it took."""
        number, (command, members) = job
        path = os.path.join(workdir, f"batch{number}.mlir")
        _, _, chunks = run_split(command, [plans[i][0][1] for i in members],
                                 path, args.timeout)
        if chunks is None:
            return [(i, command, alone(command, i)) for i in members], \
                1 + len(members)
        return [(i, command, ("ok" if chunk.strip() else "error", ""))
                for i, chunk in zip(members, chunks)], 1

    parsed = {}
    runs = processes = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for outcomes, used in pool.map(check, enumerate(batches)):
            processes += used
            for index, command, (status, output) in outcomes:
                runs += 1
                if status in ("crash", "timeout"):
                    findings.add(status, plans[index][0], command, output)
                if command is commands[()]:
                    parsed[index] = status
    verified, verifying = [], 0
    for index, (mutant, _) in enumerate(plans):
        if parsed.get(index) == "ok":
            verifying += 1
            if mutant[2]:
                verified.append(index)

    equivalence = compared = 0
    if args.zero_run and verified:
        sample = rng.sample(verified, min(args.equivalence_runs, len(verified)))
        jobs = [(i, rng.choice(EQUIVALENCE_PIPELINES)) for i in sample]

        def equivalent(job):
            index, (pipeline, options) = job
            path = os.path.join(workdir, f"m{index}.mlir")
            command = [args.zero_run, "MUTANT", "--timeout", "20",
                       *options, f"--equivalent-after={pipeline}"]
            real = [path if a == "MUTANT" else a for a in command]
            return index, command, run(real, args.timeout)

        with ThreadPoolExecutor(args.jobs) as pool:
            for index, command, (status, output) in pool.map(equivalent, jobs):
                equivalence += 1
                compared += status == "ok"
                if status == "ok" or status == "error":
                    if any(s in output for s in MISCOMPILE_SIGNS):
                        findings.add("miscompile", plans[index][0], command,
                                     output)
                else:
                    findings.add(status, plans[index][0], command, output)

    caught, invalid, clean = check_verification(args, rng, findings, workdir)

    c = findings.count
    print(f"zero-fuzz: seed {args.seed}, {time.time() - start:.0f} s")
    if args.divergent:
        print(f"zero-fuzz: {args.divergent} rank-dependent mutants: "
              f"{caught} caught by zero-verify-collectives, {c['missed']} "
              f"missed, {invalid} not valid IR; {clean} examples verify clean")
    print(f"zero-fuzz: {verifying} mutants verify, {len(verified)} of them "
          f"of examples; {compared} equivalence runs compared results, "
          f"{equivalence - compared} were refused with an error")
    print(f"zero-fuzz: {runs} zero-opt runs in {processes} processes "
          f"(--batch {args.batch})")
    if args.unmutated:
        print(f"zero-fuzz: {len(seeds)} seeds as written, each through "
              f"{len(passes)} passes and pipelines")
    print(f"zero-fuzz: {len(plans)} mutants, {runs} zero-opt runs, "
          f"{equivalence} equivalence runs: "
          f"{c['crash']} crash(es), {c['timeout']} timeout(s), "
          f"{c['miscompile']} miscompile(s), {c['missed']} missed, "
          f"{c['false alarm']} false alarm(s)")
    return 1 if sum(c.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
