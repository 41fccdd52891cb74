"""``fleetwatch up``, the CLI and idle memory (`bench/compass.py`), on the demo in a scratch
``FLEETWATCH_HOME`` on free ports:

- ``up``: from the command to the approval page answering; reference: ``python -c pass`` (the
  interpreter's own start: a reference our code cannot move);
- the CLI: ``status`` and ``pending list`` against the running demo; reference: ``python -c pass``;
- idle RSS of each service (``VmRSS``); reference: an idle bare interpreter;
- where each service's import memory goes (not with ``--quick``): ``tracemalloc`` over importing its ``__main__``,
  grouped by top-level package.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.compass_common import Row, median
from services.ctl import supervise
from shared.config import Settings, load_settings
from tests.procs import base_env
from tests.support import demo_ports

FLEETWATCH = Path(sys.executable).parent / "fleetwatch"
SERVICES = {
    "assistant": "services.assistant",
    "executor": "services.executor",
    "approval_web": "services.approval_web",
}
PAGE_SECONDS = 120.0


@dataclass
class StackResult:
    rows: list[Row] = field(default_factory=list)
    up_seconds: float = 0.0
    cli_seconds: float = 0.0
    rss_mb: dict[str, float] = field(default_factory=dict)
    memory_report: str = ""


async def page_answers(port: int) -> bool:
    """True when ``GET /`` on 127.0.0.1:`port` gets an HTTP status line."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    try:
        writer.write(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        await writer.drain()
        return (await reader.readline()).startswith(b"HTTP/")
    except OSError:
        return False
    finally:
        writer.close()


async def timed_up(env: dict[str, str]) -> float:
    """Seconds from ``fleetwatch up`` to the approval page answering."""
    port = int(env["FLEETWATCH_APPROVE_PORT"])
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        str(FLEETWATCH), "up", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = started + PAGE_SECONDS
    while not await page_answers(port):
        if process.returncode not in (None, 0) or time.perf_counter() > deadline:
            _, err = await process.communicate()
            raise SystemExit(f"fleetwatch up failed: {err.decode()[-2000:]}")
        await asyncio.sleep(0.01)  # polling real processes, bounded by the deadline
    seconds = time.perf_counter() - started
    if await process.wait() != 0:
        raise SystemExit("fleetwatch up exited with an error")
    return seconds


def timed_run(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr.decode()[-1000:]}")
    return seconds


def program_pid(settings: Settings, name: str) -> int:
    """The pid supervisord gives for `name` (``supervisorctl pid``)."""
    config = settings.runtime_dir / "supervisord.conf"
    argv = [sys.executable, "-m", "supervisor.supervisorctl", "-c", str(config), "pid", name]
    return int(subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip())


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise SystemExit(f"no VmRSS for pid {pid}")


def bare_interpreter_rss() -> float:
    """RSS of an idle ``python`` that imported nothing of ours (MB)."""
    code = "import sys; print('ready', flush=True); sys.stdin.read()"
    with subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdout.readline()  # started
        mb = rss_mb(proc.pid)
        proc.stdin.close()
    return mb


MEMORY_PROBE = """
import sys, tracemalloc, collections
tracemalloc.start()
import importlib; importlib.import_module(sys.argv[1])
stats = tracemalloc.take_snapshot().statistics("filename")
sizes = collections.Counter()
for stat in stats:
    path = stat.traceback[0].filename
    if "site-packages/" in path:
        name = path.split("site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    elif "/services/" in path or "/shared/" in path:
        name = "fleetwatch"
    elif path.startswith("<frozen"):
        name = "import-machinery"
    else:
        name = "stdlib"
    sizes[name] += stat.size
print(sum(sizes.values()), *(f"{n}={s}" for n, s in sizes.most_common(6)))
"""
RSS_PROBE = """
import sys, importlib
importlib.import_module(sys.argv[1])
print(int([l for l in open("/proc/self/status") if l.startswith("VmRSS")][0].split()[1]) * 1024)
"""


def memory_of_imports(module: str) -> tuple[float, float, list[tuple[str, float]]]:
    """(RSS after importing `module`'s ``__main__``, the Python memory those imports allocated
    (tracemalloc, in another process), its top packages), in MB. "import-machinery" is what
    the import system allocated itself: the code objects and modules of every package."""

    def probe(code: str) -> list[str]:
        argv = [sys.executable, "-c", code, f"{module}.__main__"]
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()

    rss = int(probe(RSS_PROBE)[0]) / 2**20
    out = probe(MEMORY_PROBE)
    top = [(name, int(size) / 2**20) for name, size in (part.rsplit("=", 1) for part in out[1:])]
    return rss, int(out[0]) / 2**20, top


async def measure(folder: Path, *, quick: bool) -> StackResult:
    result = StackResult()
    env = base_env(folder / "home", **demo_ports())
    env.pop("FLEETWATCH_LOG_LEVEL")
    settings = load_settings(env)
    result.up_seconds = await timed_up(env)
    floor = float("nan")
    try:
        runs = 2 if quick else 7
        python = [sys.executable, "-c", "pass"]
        commands = {
            "status": [str(FLEETWATCH), "status"],
            "pending list": [str(FLEETWATCH), "pending", "list"],
        }
        samples: dict[str, list[float]] = {name: [] for name in [*commands, "python -c pass"]}
        for _ in range(runs):
            for name, argv in commands.items():
                samples[name].append(await asyncio.to_thread(timed_run, argv, env))
            samples["python -c pass"].append(await asyncio.to_thread(timed_run, python, env))
        floor = median(samples["python -c pass"])
        for name in commands:
            result.rows.append(Row(f"fleetwatch {name}", median(samples[name]), floor, "s", "<= 0.2 s"))
        result.cli_seconds = max(median(samples[name]) for name in commands)
        bare = await asyncio.to_thread(bare_interpreter_rss)
        for name, target in (("assistant", 90), ("executor", 60), ("approval_web", 50)):
            result.rss_mb[name] = rss_mb(await asyncio.to_thread(program_pid, settings, name))
            result.rows.append(Row(f"idle RSS {name}", result.rss_mb[name], bare, "MB", f"<= {target} MB"))
    finally:
        await supervise.stop(settings)
    result.rows.insert(
        0, Row("fleetwatch up (demo) -> page answers", result.up_seconds, floor, "s", "<= 3 s")
    )
    if quick:
        result.memory_report = "Where idle memory goes: run without --quick (tracemalloc by package)."
        return result
    lines = ["Where idle memory goes: importing each service's __main__ (tracemalloc by package, MB)"]
    for name, module in SERVICES.items():
        rss, traced, top = await asyncio.to_thread(memory_of_imports, module)
        parts = ", ".join(f"{package} {mb:.1f}" for package, mb in top)
        lines.append(
            f"  {name:13} idle {result.rss_mb[name]:5.1f}; after its imports alone {rss:5.1f},"
            f" of which Python memory {traced:5.1f}: {parts}"
        )
    result.memory_report = "\n".join(lines)
    return result
