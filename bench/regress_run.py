"""Runs one benchmark process for bench/regress.py and measures it.

`run()` starts the process with stdout and stderr into a log file, polls /proc/PID/status for
VmPeak (peak virtual size) while it runs, and reaps it with wait4 for its own rusage: user and
system CPU seconds and peak RSS (ru_maxrss) of that process alone (threads included).

Instruction counters (`Counter`): `perf stat -e instructions:u` where the kernel exposes the
counter (`perf stat -e instructions true` prints a number), else valgrind's callgrind (a 20-50x
slower run, so regress.py counts on a short run), or none. Callgrind also splits the count
between the table layer, the engine and the rest (callgrind_layers.py).
"""
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass

import callgrind_layers


@dataclass
class Proc:
    returncode: int
    output: str
    user_s: float
    sys_s: float
    maxrss_kb: int
    vmpeak_kb: int
    wall_s: float
    instructions: int | None = None
    # callgrind only: instructions by layer (callgrind_layers.split: table, engine, rest).
    layers: dict | None = None


def _vmpeak(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def run(argv, log_path, env=None, cwd=None):
    """Runs argv to completion; returns its measurements and its output (stdout + stderr)."""
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    t0 = time.monotonic()
    with open(log_path, "wb") as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                             stdin=subprocess.DEVNULL)
    vmpeak = 0
    delay = 0.01
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        vmpeak = max(vmpeak, _vmpeak(p.pid))
        time.sleep(delay)
        delay = min(delay * 2, 0.1)
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keep Popen from waiting
    wall = time.monotonic() - t0
    with open(log_path, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    return Proc(p.returncode, text, ru.ru_utime, ru.ru_stime, ru.ru_maxrss, vmpeak, wall)


class Counter:
    """Counts the user-space instructions of a process: kind is perf, callgrind or none."""

    def __init__(self, kind):
        if kind == "auto":
            kind = "perf" if perf_works() else "callgrind" if shutil.which("valgrind") else "none"
        if kind == "perf" and not perf_works():
            raise SystemExit("regress: --count=perf but `perf stat -e instructions true` "
                             "counts nothing here (no PMU in this VM, or perf_event_paranoid)")
        if kind == "callgrind" and not shutil.which("valgrind"):
            raise SystemExit("regress: --count=callgrind needs valgrind (apt-get install valgrind)")
        self.kind = kind

    def run(self, argv, log_path, env=None):
        if self.kind == "none":
            return run(argv, log_path, env)
        if self.kind == "perf":
            stat = log_path + ".perf"
            p = run(["perf", "stat", "-x", ",", "-e", "instructions:u", "-o", stat, "--"] + argv,
                    log_path, env)
            p.instructions = _perf_count(stat)
            return p
        profile = log_path + ".callgrind"
        p = run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}"] + argv,
                log_path, env)
        m = re.findall(r"^==\d+== Collected : (\d+)\s*$", p.output, re.M)
        p.instructions = int(m[-1]) if m else None
        p.layers = callgrind_layers.split_file(profile)
        try:
            os.remove(profile)
        except OSError:
            pass
        return p


def _perf_count(path):
    try:
        with open(path) as f:
            for line in f:
                cols = line.strip().split(",")
                if len(cols) > 2 and cols[2].startswith("instructions") and cols[0].isdigit():
                    return int(cols[0])
    except OSError:
        pass
    return None


def perf_works():
    if not shutil.which("perf"):
        return False
    p = subprocess.run(["perf", "stat", "-x", ",", "-e", "instructions:u", "true"],
                       capture_output=True, text=True)
    return p.returncode == 0 and any(
        l.split(",")[0].isdigit() for l in p.stderr.splitlines() if "instructions" in l)


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except (OSError, ValueError):
        return None
