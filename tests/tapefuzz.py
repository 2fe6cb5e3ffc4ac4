"""Fuzzing of tape files (issue 26, item 4): mutated files are loaded and swept in a worker
process with Numba's bounds checking on; each must be refused with TapeFormatError or load
as a tape whose gradient is right, never kill the worker, read out of bounds or raise.

Pieces: the corpus of valid tapes (tests/tapefuzz_corpus.py), the mutations
(tests/tapefuzz_mutate.py), the worker that loads and sweeps them
(tests/tapefuzz_worker.py: the outcome classes are described there) and, here, the runner
that feeds it jobs, restarts it after a crash or a hang, and the report. Commands::

    python tests/tapefuzz.py profile --mutations 10000 --seed 0 --cache DIR   # long profile
    python tests/tapefuzz.py repro --seed 0 --job 123 --cache DIR   # one mutation again
    python tests/tapefuzz.py worker JOBS RESULTS CORPUS [OPS]         # (run by the runner)

``--cache DIR`` keeps the worker's bounds-checked compiled sweeps (never the normal
cache: Numba's cache does not tell bounds-checked code apart); the first run compiles them.
tests/test_tapefile_fuzz.py runs the short profile (``suite``) in the test suite.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import tapefuzz_corpus  # noqa: E402  (found through the path set above)
import tapefuzz_mutate  # noqa: E402

#: Outcomes that fail the test (the others: the file was refused, or its tape is right).
FAILURES = ("signal", "timeout", "out_of_bounds", "other_exception", "wrong_gradient",
            "baseline", "harness_error")
#: profile -> (corpus programs, fuzz programs, mutations); suite: tests/test_tapefile_fuzz.py.
PROFILES = {"suite": (tapefuzz_corpus.SUITE, 6, 300),
            "long": (tuple(tapefuzz_corpus.FIXED), 30, 10000)}
#: Seconds a job may take once started (a cold compile of a new op set included: the
#: sweeps of a few ops compile in 10-30 s with bounds checks).
JOB_TIMEOUT = 90.0


class Fuzz:
    """A profile's corpus and jobs in a work directory."""

    def __init__(self, workdir, profile="suite", seed=0, mutations=None, focus=""):
        self.dir, self.profile, self.seed, self.focus = Path(workdir), profile, seed, focus
        kinds, _, members = focus.partition(":")  # "value,swap:pool,k": kinds:members
        tapefuzz_mutate.ONLY_KINDS = kinds.split(",") if kinds else None
        tapefuzz_mutate.ONLY_MEMBERS = members.split(",") if members else None
        names, n_fuzz, default = PROFILES[profile]
        self.mutations = default if mutations is None else mutations
        self.corpus = tapefuzz_corpus.build(self.dir, names, n_fuzz, fuzz_seed=0)
        self.ops = sorted({n for e in self.corpus for n in e["targets"]["ops"]})
        # op names a mutation may write, and the op set whose sweeps the worker compiles
        # first (tapes of its ops compile nothing more): any op for the long profile (its
        # first run compiles every op's sweeps, minutes), the corpus's for the suite
        self.names = self.ops
        if profile == "long":
            from jittape.ops import OPS
            self.names = [op.name for op in OPS]

    def job(self, j):
        """Job ``j``: a mutated file of a program drawn from ``(seed, j)``."""
        rng = np.random.default_rng([self.seed, j])
        e = self.corpus[int(rng.integers(len(self.corpus)))]
        path = self.dir / f"m{j}.npz"
        kind, desc = tapefuzz_mutate.mutate_file(rng, e["path"], path, e["targets"],
                                                 self.names)
        return dict(id=f"m{j}", index=j, program=e["id"], path=str(path), kind=kind, desc=desc)

    def jobs(self):
        """The unmutated corpus files first (each must come out ``ok_same``), then the
        mutations."""
        base = [dict(id=f"b{n}", index=-1, program=e["id"], path=e["path"], kind="none",
                     desc="unmutated") for n, e in enumerate(self.corpus)]
        return base + [self.job(j) for j in range(self.mutations)]

    def repro(self, job, cache):
        """The command that runs ``job`` again."""
        if job["kind"] == "none":
            return f"(corpus program {job['program']} itself)"
        focus = f" --focus {self.focus}" if self.focus else ""
        return (f"python tests/tapefuzz.py repro --profile {self.profile} --seed {self.seed} "
                f"--job {job['index']}{focus} --cache {cache}")


# --- running the worker --------------------------------------------------------------------
def worker_env(cache):
    """The worker's environment: bounds checks, foreground compiles, its own caches."""
    cache = Path(cache)
    for d in (cache, cache / "numba", cache / "jittape"):
        d.mkdir(mode=0o700, parents=True, exist_ok=True)  # (jittape trusts owner-only dirs)
    path = os.pathsep.join([str(HERE)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    return dict(os.environ, NUMBA_BOUNDSCHECK="1", JITTAPE_BACKGROUND="0", JITTAPE_QUIET="1",
                NUMBA_CACHE_DIR=str(cache / "numba"), JITTAPE_CACHE_DIR=str(cache / "jittape"),
                PYTHONPATH=path)


def _limits():
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash writes no core file
    gib = 8 << 30  # a huge allocation fails with MemoryError, not the machine
    resource.setrlimit(resource.RLIMIT_AS, (gib, gib))


class Shard:
    """One worker process over a list of jobs, restarted after each crash or hang."""

    def __init__(self, name, jobs, fuzz, cache, timeout):
        self.dir = fuzz.dir / name
        self.dir.mkdir(exist_ok=True)
        self.jobs = {j["id"]: j for j in jobs}
        self.order = [j["id"] for j in jobs]
        (self.dir / "jobs.jsonl").write_text("".join(json.dumps(j) + "\n" for j in jobs))
        self.results_path = self.dir / "results.jsonl"
        self.results_path.write_text("")
        self.fuzz, self.cache, self.timeout = fuzz, cache, timeout
        self.results, self.proc, self.pos = {}, None, 0
        self.started = self.ready = None
        self.deaths = 0

    def start(self):
        args = [sys.executable, str(HERE / "tapefuzz.py"), "worker",
                str(self.dir / "jobs.jsonl"), str(self.results_path),
                str(self.fuzz.dir / "corpus.json"), ",".join(self.fuzz.names)]
        with open(self.dir / "worker.log", "ab") as log:
            self.log_start = log.tell()  # (the tail of a dead worker's log: its own lines)
            # (preexec_fn: this process starts workers from one thread, never from several)
            self.proc = subprocess.Popen(args, env=worker_env(self.cache),
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         preexec_fn=_limits)  # noqa: PLW1509
        self.started, self.ready = None, False

    @property
    def done(self):
        return len(self.results) == len(self.order)

    def poll(self):
        """Read new result lines; handle a dead or hung worker. Returns False when done."""
        self._read()
        code = self.proc.poll()
        if code is None and self.started and time.monotonic() - self.started[1] > self.timeout:
            self.proc.kill()  # (our own child, by its pid)
            self.proc.wait()
            self._record(self.started[0], "timeout", f"over {self.timeout:.0f} s")
            code = "killed"
        elif code is not None:
            self._read()
            if self.started:
                how = f"signal {-code}" if code < 0 else f"exit status {code}"
                self._record(self.started[0], "signal", f"the worker died: {how}; "
                             f"{self._log_tail()}")
            elif not self.done:
                self.deaths += 1
                if self.deaths > 3:
                    raise RuntimeError(f"the worker dies between jobs: {self._log_tail()}")
        if code is not None and not self.done:
            self.start()
        return not self.done

    def _record(self, jid, outcome, detail):
        self.results[jid] = dict(id=jid, outcome=outcome, detail=detail)
        with open(self.results_path, "a") as f:
            f.write(json.dumps(self.results[jid]) + "\n")
        self.started = None

    def _read(self):
        with open(self.results_path) as f:
            f.seek(self.pos)
            text = f.read()
        lines = text.split("\n")
        self.pos += len(text) - len(lines[-1])  # (a line still being written stays)
        for line in lines[:-1]:
            if line.startswith("start "):
                self.started = (line.split()[1], time.monotonic())
            elif line == "ready":
                self.ready = True
            elif line.startswith("{"):
                r = json.loads(line)
                self.results[r["id"]] = r
                self.started = None

    def _log_tail(self):
        with open(self.dir / "worker.log", "rb") as f:
            f.seek(self.log_start)
            text = f.read().decode(errors="replace").strip().splitlines()
        return " | ".join(text[-3:])[-400:]


def run(fuzz, cache, workers=1, timeout=JOB_TIMEOUT, progress=None, jobs=None):
    """Run the jobs of ``fuzz`` (or ``jobs``) in ``workers`` worker processes; the results
    as a list of ``(job, result)``. The first worker compiles the sweeps, then the others
    start."""
    jobs = fuzz.jobs() if jobs is None else jobs
    shards = [Shard(f"w{i}", jobs[i::workers], fuzz, cache, timeout) for i in range(workers)]
    shards[0].start()
    waiting, t0, shown = shards[1:], time.monotonic(), 0
    while True:
        busy = [s.poll() for s in shards if s.proc is not None]
        if waiting and shards[0].ready:
            for s in waiting:
                s.start()
            waiting = []
        done = sum(len(s.results) for s in shards)
        if progress and done >= shown + progress:
            shown = done
            print(f"  {done}/{len(jobs)} jobs, {time.monotonic() - t0:.0f} s", flush=True)
        if not any(busy) and not waiting:
            break
        time.sleep(0.05)
    results = {r["id"]: r for s in shards for r in s.results.values()}
    out = []
    for job in jobs:
        r = dict(results[job["id"]])
        if job["kind"] == "none" and r["outcome"] != "ok_same":
            r["detail"] = f"{r['outcome']}: {r.get('detail', '')}"
            r["outcome"] = "baseline"  # the corpus itself must replay as recorded
        out.append((job, r))
    return out


# --- the report ------------------------------------------------------------------------------
def table(results):
    """Counts per outcome class, overall and per mutation kind, as text."""
    kinds = sorted({j["kind"] for j, _ in results})
    classes = sorted({r["outcome"] for _, r in results})
    count = collections.Counter((j["kind"], r["outcome"]) for j, r in results)
    rows = [["kind"] + classes + ["total"]]
    for k in kinds + ["total"]:
        cells = [sum(v for (kk, c), v in count.items() if c == cl and k in (kk, "total"))
                 for cl in classes]
        rows.append([k] + [str(c) for c in cells] + [str(sum(cells))])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows)


def signature(job, r):
    """What groups failures into holes: the outcome, where and what, numbers left out."""
    member = re.search(r"(\w+)(?:\.npy|\[| of records| as | \(|$)", job["desc"] or "")
    text = re.sub(r"\d+", "N", f"{r.get('step', '')} {r.get('detail', '')}")
    text = re.sub(r"/\S+", "PATH", text)
    return f"{r['outcome']} | {job['kind']} {member.group(1) if member else ''} | {text[:160]}"


def failures(results, fuzz, cache, per_class=3, notes=None):
    """The failing jobs grouped by :func:`signature`, as text: count, the first
    ``per_class`` (None: all) with their reproductions; ``notes(signature)`` may add a line."""
    groups = collections.defaultdict(list)
    for job, r in results:
        if r["outcome"] in FAILURES:
            groups[signature(job, r)].append((job, r))
    lines = []
    for sig, items in sorted(groups.items(), key=lambda kv: (kv[0], -len(kv[1]))):
        lines.append(f"[{len(items)}x] {sig}")
        note = notes(sig) if notes else None
        if note:
            lines.append(f"  ({note})")
        for job, r in items[:per_class]:
            lines.append(f"    {job['program']}: {job['kind']}: {job['desc']}")
            lines.append(f"      -> {r['outcome']} {r.get('step', '')}: "
                         f"{r.get('detail', '')[:300]}")
            lines.append(f"      {fuzz.repro(job, cache)}")
    return "\n".join(lines)


# --- commands ------------------------------------------------------------------------------
def profile(args):
    cache = Path(args.cache).resolve()
    with tempfile.TemporaryDirectory(prefix="tapefuzz-") as work:
        t0 = time.monotonic()
        fuzz = Fuzz(work, args.profile, args.seed, args.mutations, args.focus)
        print(f"corpus: {len(fuzz.corpus)} programs, {len(fuzz.ops)} ops; "
              f"{fuzz.mutations} mutations (seed {args.seed}); cache {cache}", flush=True)
        results = run(fuzz, cache, args.workers, progress=args.progress)
        print(f"\n{len(results)} jobs in {time.monotonic() - t0:.0f} s\n")
        print(table(results))
        if args.keep:
            keep(results, fuzz, Path(args.keep))
        text = failures(results, fuzz, cache)
        print("\nfailures, grouped:\n" + (text or "none"))
        if args.json:
            Path(args.json).write_text(json.dumps(results))
    return 1 if text else 0


def keep(results, fuzz, directory):
    """Copy the failing jobs' files (and the corpus) to ``directory``: the seeds reproduce a
    mutation only while jittape records the corpus programs as it did."""
    import shutil
    (directory / "corpus").mkdir(parents=True, exist_ok=True)
    corpus = [dict(e, path=str(directory / "corpus" / Path(e["path"]).name))
              for e in fuzz.corpus]
    for e, kept in zip(fuzz.corpus, corpus):
        shutil.copy(e["path"], kept["path"])
    (directory / "corpus.json").write_text(json.dumps(corpus))
    for job, r in results:
        if r["outcome"] in FAILURES and job["kind"] != "none":
            shutil.copy(job["path"], directory / f"{job['program']}-{job['id']}.npz")
    print(f"failing files kept in {directory}")


def repro(args):
    cache = Path(args.cache).resolve()
    work = Path(tempfile.mkdtemp(prefix="tapefuzz-repro-"))
    if args.file is None and args.job is None:
        sys.exit("repro: give --job or --file")
    fuzz = Fuzz(work, args.profile, args.seed, 0, args.focus)
    if args.file:  # a kept file (profile --keep) of a program of the corpus
        keep = Path(args.file).resolve()
        job = dict(id="file", index=-1, program=args.program or keep.name.split("-")[0],
                   path=str(keep), kind="file", desc=keep.name)
    else:
        job = fuzz.job(args.job)
        keep = Path(tempfile.gettempdir()) / f"tapefuzz-{args.profile}-{args.seed}-{args.job}.npz"
        keep.write_bytes(Path(job["path"]).read_bytes())
        job["path"] = str(keep)
    shard = Shard("w0", [job], fuzz, cache, JOB_TIMEOUT)
    shard.start()
    while shard.poll():
        time.sleep(0.05)
    r = shard.results[job["id"]]
    print(f"program {job['program']}, {job['kind']}: {job['desc']}\nfile {keep}\n"
          f"outcome: {r['outcome']} {r.get('step', '')}\n{r.get('detail', '')}")
    print(f"\nby hand:\n  NUMBA_BOUNDSCHECK=1 JITTAPE_BACKGROUND=0 NUMBA_CACHE_DIR={cache}/numba "
          f"JITTAPE_CACHE_DIR={cache}/jittape python -c \"import jittape; "
          f"t = jittape.load('{keep}'); t.auto_compile = False; "
          f"x = t.arrays.value(t.arrays.inputs[0]); print(t.value_and_gradient(x)); "
          f"print(t.format())\"")
    return 1 if r["outcome"] in FAILURES else 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "worker":
        import tapefuzz_worker
        return tapefuzz_worker.main(*argv[1:])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("profile", "repro"):
        s = sub.add_parser(name)
        s.add_argument("--profile", choices=PROFILES, default="long" if name == "profile"
                       else "suite")
        s.add_argument("--seed", type=int, default=0)
        s.add_argument("--cache", required=True, help="the worker's compile cache")
        s.add_argument("--focus", default="", help="only these mutation kinds, and members "
                       "for element mutations: 'value,multi:pool,k' (default: all)")
    prof = sub.choices["profile"]
    prof.add_argument("--mutations", type=int, default=None)
    prof.add_argument("--workers", type=int, default=1)
    prof.add_argument("--progress", type=int, default=500, help="print every N jobs")
    prof.add_argument("--json", help="write every (job, result) to this file")
    prof.add_argument("--keep", help="copy the failing files to this directory")
    rep = sub.choices["repro"]
    rep.add_argument("--job", type=int, help="the job index (of --profile, --seed, --focus)")
    rep.add_argument("--file", help="or a mutated file (one profile --keep kept)")
    rep.add_argument("--program", help="the file's corpus program (default: its name's head)")
    args = p.parse_args(argv)
    return (profile if args.command == "profile" else repro)(args)


if __name__ == "__main__":
    sys.exit(main())
