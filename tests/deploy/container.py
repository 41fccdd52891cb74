"""Fleetwatch in containers, end to end (``scripts/container-test``; docs/container.md): builds
the base image from Debian's packages and Fleetwatch's image, runs ``deploy/container/compose.yaml``
against the lab with podman-compose, asks the assistant (one proposal), approves it in Chromium
on the host, checks the health checks, and runs the intruder (`tests.deploy.container_intruder`)
three times: a stranger's uid, a uid given every socket folder's group, and the overflow uid
65534 with those groups. Every attempt must be refused, and the root file systems must be
read-only. Prints each step with its time and each intruder attempt with its refusal; exits 1
at the first thing that is not so. Everything it makes (images, containers, volumes) is named
``$FW_CONTAINER_PREFIX`` (default ``fw-ctest``) and removed at the end, whatever happened.

Needs root, podman with runc, mmdebstrap (``deploy/debian-packages.txt``) and a network path to
Debian's mirror (``FW_DEBIAN_MIRROR``, default deb.debian.org). The wheels are built on the host
with pip's own configuration (its index and CA): nothing of it enters the image.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTAINER = ROOT / "deploy" / "container"
INTRUDER = Path(__file__).resolve().parent / "container_intruder.py"
MIRROR = os.environ.get("FW_DEBIAN_MIRROR", "http://deb.debian.org/debian")
BASE_PACKAGES = ("python3",)
"""What the base adds to Debian's minbase: the interpreter only (no pip, no compiler)."""
EXCLUDED_PATHS = ("/usr/share/doc/*", "/usr/share/man/*", "/usr/share/locale/*", "/usr/share/info/*")
DPKG_OPTIONS = ("force-unsafe-io", *(f"path-exclude={p}" for p in EXCLUDED_PATHS))
"""No fsync while unpacking (the tree is thrown away if the build fails), and no documentation."""

OPERATOR = "10020:10020"
"""The operators' user of the image (the ``fleetwatch`` command): FLEETWATCH_APPROVAL_UIDS."""
SOCKET_GROUPS = ("10002", "10020")
"""The groups of the three socket folders (executor: fleetwatch-web; approval_web and assistant:
fleetwatch-operators): an intruder given them gets past the file wall to the peer check."""
INTRUDERS = (
    ("a stranger (uid 10666, no Fleetwatch group)", "10666:10666", ()),
    ("a stranger in every socket folder's group (uid 10667)", "10667:10667", SOCKET_GROUPS),
    ("the overflow uid 65534 in every socket folder's group", "65534:65534", SOCKET_GROUPS),
)
QUESTION = "Which rooms need attention before their next class? Start any recording that should be running."
DONE = "Done: Epiphan accepted the change."


class Failed(Exception):
    """A step did not give what it must."""


@dataclass
class Run:
    prefix: str
    work: Path
    env: dict[str, str]
    ports: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    keep_images: bool = False
    """``--keep-images``: reuse the images if they exist and keep them (while changing this test
    only; CI builds from nothing)."""

    @property
    def project(self) -> str:
        return self.prefix

    def volume(self, name: str) -> str:
        return f"{self.project}_{name}"

    def say(self, text: str) -> None:
        print(f"[{time.monotonic() - self.started:6.1f}s] {text}", flush=True)

    def run(
        self, argv: Sequence[str], *, stdin: str | None = None, check: bool = True, timeout: float = 600
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            list(argv),
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            raise Failed(
                f"{' '.join(argv[:4])} ... exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
            )
        return done

    def podman(self, *args: str, **kw) -> subprocess.CompletedProcess[str]:
        return self.run(["podman", *args], **kw)

    def compose(self, *args: str, **kw) -> subprocess.CompletedProcess[str]:
        tool = Path(sys.executable).parent / "podman-compose"
        return self.run(
            [str(tool), "--project-name", self.project, "-f", str(CONTAINER / "compose.yaml"), *args], **kw
        )

    def one_off(
        self,
        user: str,
        *args: str,
        volumes: Sequence[str] = (),
        groups: Sequence[str] = (),
        env: dict[str, str] | None = None,
        stdin: str | None = None,
        check: bool = True,
    ):
        """``podman run --rm`` of the image as `user`, hardened as the services are."""
        argv = [
            "run",
            "--rm",
            "-i",
            "--user",
            user,
            "--read-only",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--network",
            "host",
            "--tmpfs",
            "/tmp",
        ]
        for group in groups:
            argv += ["--group-add", group]
        for volume in volumes:
            argv += ["-v", volume]
        for key, value in (env or {}).items():
            argv += ["-e", f"{key}={value}"]
        return self.podman(*argv, self.image, *args, stdin=stdin, check=check)

    @property
    def image(self) -> str:
        return f"localhost/{self.prefix}:latest"

    @property
    def base(self) -> str:
        return f"localhost/{self.prefix}-base:bookworm"


def free_port() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def containers_conf(work: Path) -> Path:
    """runc (crun fails on some cgroup layouts), and explicit ulimits within this machine's hard
    limits (podman's defaults may exceed them and be refused)."""
    nofile = min(4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    nproc = min(4096, resource.getrlimit(resource.RLIMIT_NPROC)[1])
    path = work / "containers.conf"
    path.write_text(
        "[containers]\n"
        f'default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n'
        "pids_limit = 256\n"
        "[engine]\n"
        'runtime = "runc"\n'
    )
    return path


def build_base(run: Run) -> None:
    """Debian's minbase and python3, imported as an image (no registry needed)."""
    options = [f"--dpkgopt={option}" for option in DPKG_OPTIONS]
    argv = [
        "mmdebstrap",
        "--quiet",
        "--variant=minbase",
        f"--include={','.join(BASE_PACKAGES)}",
        *options,
        "bookworm",
        "-",
        MIRROR,
    ]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=run.env) as debootstrap:
        imported = subprocess.run(
            ["podman", "import", "-q", "-", run.base],
            stdin=debootstrap.stdout,
            capture_output=True,
            text=True,
            env=run.env,
            check=False,
        )
        _, err = debootstrap.communicate()
    if debootstrap.returncode != 0 or imported.returncode != 0:
        raise Failed(f"the base image: {err.decode()[-2000:]}{imported.stderr[-2000:]}")


def build_image(run: Run) -> None:
    """The wheels on the host (pip's own index and CA), then the image from them."""
    context = run.work / "context"
    context.mkdir()
    shutil.copy(CONTAINER / "Containerfile", context / "Containerfile")
    run.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--wheel-dir", str(context / "wheels"), str(ROOT), "pip"]
    )
    run.podman(
        "build", "-q", "--layers=false", "--build-arg", f"BASE={run.base}", "-t", run.image, str(context)
    )


def check_image(run: Run) -> None:
    """Installed, not editable; no compiler and no pip; everything under /opt root's."""
    script = (
        "import importlib.metadata as m, json, os, shutil, sys\n"
        "d = m.distribution('fleetwatch')\n"
        "url = d.read_text('direct_url.json')\n"
        "editable = bool(url and json.loads(url).get('dir_info', {}).get('editable'))\n"
        "compilers = [c for c in ('cc', 'gcc', 'clang', 'make') if shutil.which(c)]\n"
        "import importlib.util as u\n"
        "pip = u.find_spec('pip') is not None\n"
        "writable = [os.path.join(r, n) for r, ds, fs in os.walk('/opt/fleetwatch') for n in ds + fs\n"
        "            if not os.path.islink(os.path.join(r, n))\n"
        "            and (lambda s: s.st_uid != 0 or s.st_mode & 0o022)(os.lstat(os.path.join(r, n)))]\n"
        "print(json.dumps({'editable': editable, 'compilers': compilers, 'pip': pip, 'not_root': writable[:3]}))\n"
    )
    found = json.loads(run.one_off("10001:10001", "/opt/fleetwatch/venv/bin/python", "-c", script).stdout)
    run.say(f"image: {found}")
    if found["editable"] or found["compilers"] or found["pip"] or found["not_root"]:
        raise Failed(f"the image is not as the Containerfile says: {found}")


def sandbox_devices(run: Run) -> str:
    script = (
        "from services.lab.scenario import load_scenario\n"
        "print(','.join(d.id for _, d in load_scenario('campus').teams.sandbox.devices()))\n"
    )
    return run.one_off("10005:10005", "/opt/fleetwatch/venv/bin/python", "-c", script).stdout.strip()


def wait_for(what: str, probe, seconds: float = 60) -> None:
    """Poll `probe` (a real process or port) until true, at most `seconds`."""
    deadline = time.monotonic() + seconds
    while not probe():
        if time.monotonic() > deadline:
            raise Failed(f"{what}: not within {seconds:.0f} s")
        time.sleep(0.2)


def volume_path(run: Run, name: str) -> Path:
    return Path(
        run.podman("volume", "inspect", "--format", "{{.Mountpoint}}", run.volume(name)).stdout.strip()
    )


def lab_state(run: Run) -> dict:
    with urllib.request.urlopen(
        f"http://127.0.0.1:{run.ports['FLEETWATCH_LAB_PORT']}/_lab/state", timeout=10
    ) as r:
        return json.load(r)


SLOT_WRITER = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from shared.epiphan.slots import SignIn, write_slot\n"
    "team = json.load(sys.stdin)\n"
    "write_slot(Path(sys.argv[1]), SignIn(access_token=team['token'], server=sys.argv[2], team_id=team['team_id'], kind='lab'))\n"
)


def sign_in(run: Run) -> None:
    """The lab's demo sign-ins, each written by its own service's user into its own slot's volume
    (as ``fleetwatch demo`` places them)."""
    wait_for("the lab", lambda: lab_answers(run))
    teams = {team["name"]: team for team in lab_state(run)["teams"]}
    mcp = f"http://127.0.0.1:{run.ports['FLEETWATCH_LAB_PORT']}/mcp"
    for user, volume, folder, file, team in (
        ("10001:10001", "executor-tokens", "/var/lib/fleetwatch/executor-tokens", "sandbox.json", "sandbox"),
        ("10003:10003", "assistant-tokens", "/var/lib/fleetwatch/assistant-tokens", "read.json", "normal"),
    ):
        run.one_off(
            user,
            "/opt/fleetwatch/venv/bin/python",
            "-c",
            SLOT_WRITER,
            f"{folder}/{file}",
            mcp,
            volumes=[f"{run.volume(volume)}:{folder}"],
            stdin=json.dumps(teams[team]),
        )


def lab_answers(run: Run) -> bool:
    try:
        lab_state(run)
    except OSError:
        return False
    return True


def operator(run: Run, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``fleetwatch ARGS`` as the operators' user, in a container with the sockets' volume only."""
    return run.one_off(
        OPERATOR,
        "fleetwatch",
        *args,
        volumes=[f"{run.volume('sockets')}:/run/fleetwatch"],
        env={"FLEETWATCH_WRITE_DEVICE_IDS": run.env["FLEETWATCH_WRITE_DEVICE_IDS"]},
        check=check,
    )


def doctor_compose(run: Run) -> None:
    """``fleetwatch doctor --compose`` as the operator: the shipped file agrees; a copy whose
    executor admits the assistant's uid instead of approval_web's FAILs."""
    wrong = run.work / "compose-wrong.yaml"
    text = (CONTAINER / "compose.yaml").read_text()
    wrong.write_text(text.replace('FLEETWATCH_EXECUTOR_UIDS: "10002"', 'FLEETWATCH_EXECUTOR_UIDS: "10003"'))
    for path, want in ((CONTAINER / "compose.yaml", "OK"), (wrong, "FAIL")):
        done = run.one_off(
            OPERATOR,
            "fleetwatch",
            "doctor",
            "--json",
            "--compose",
            "/etc/fleetwatch/compose.yaml",
            volumes=[f"{run.volume('sockets')}:/run/fleetwatch", f"{path}:/etc/fleetwatch/compose.yaml:ro"],
            env={"FLEETWATCH_APPROVAL_UIDS": "10020", "FLEETWATCH_EXECUTOR_UIDS": "10002"},
            check=False,
        )
        lines = [c for c in json.loads(done.stdout)["checks"] if c["name"] == "compose users"]
        for line in lines:
            run.say(f"doctor --compose {path.name}: {line['level']} {line['message']}")
        if not lines or {c["level"] for c in lines} != {want}:
            raise Failed(f"doctor --compose {path.name}: {lines}, not {want}")


def propose(run: Run) -> str:
    answer = json.loads(operator(run, "ask", "--json", QUESTION).stdout)
    waiting = [
        p
        for p in answer.get("proposals", [])
        if p.get("state") in ("waiting_for_approval", "already_waiting")
    ]
    if not waiting:
        raise Failed(f"the assistant left no proposal waiting: {json.dumps(answer)[:2000]}")
    return waiting[0]["proposal_id"]


async def approve_in_chromium(url: str, secret: str, proposal_id: str) -> str:
    """Sign in on the page with `secret`, approve the card, and return the outcome's text."""
    from playwright.async_api import async_playwright

    from tests.e2e.browser import ARGS, CHROMIUM

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, timeout=60_000)
        try:
            page = await browser.new_page()
            page.set_default_timeout(30_000)
            await page.goto(url)
            await page.fill("#secret", secret)
            await page.press("#secret", "Enter")
            await page.wait_for_selector("main h1")
            await page.click("button.approve")
            await page.wait_for_url(f"**/outcome/{proposal_id}")
            await page.wait_for_function(
                "document.querySelector('section.outcome') && "
                "document.querySelector('section.outcome').innerText.includes('Checked afterwards')"
            )
            return await page.inner_text("section.outcome")
        finally:
            await browser.close()


def approve(run: Run, proposal_id: str) -> None:
    secret = run.podman(
        "exec", f"{run.prefix}-approval_web", "cat", "/var/lib/fleetwatch/web/approve-secret"
    ).stdout.strip()
    url = f"http://127.0.0.1:{run.ports['FLEETWATCH_APPROVE_PORT']}/"
    outcome = asyncio.run(approve_in_chromium(url, secret, proposal_id))
    run.say(f"Chromium on the host approved {proposal_id}: {' '.join(outcome.split())[:160]}")
    if DONE not in outcome:
        raise Failed(f"the outcome page does not say {DONE!r}: {outcome}")
    shown = json.loads(operator(run, "pending", "show", "--json", proposal_id).stdout)
    said = f"outcome {shown.get('outcome')!r}, verification {shown.get('verification')!r}"
    run.say(f"fleetwatch pending show {proposal_id} (the store, through approval.sock): {said}")
    if (shown.get("outcome"), shown.get("verification")) != ("ok", "verified"):
        raise Failed(f"the store does not hold the change as done and verified: {said}")


def health(run: Run) -> None:
    for service in ("executor", "approval_web", "assistant"):
        name = f"{run.prefix}-{service}"

        def healthy(name: str = name) -> bool:
            return run.podman("healthcheck", "run", name, check=False).returncode == 0

        wait_for(f"{name}'s health check", healthy, 30)
        run.say(f"health check of {service}: healthy")


def read_only_roots(run: Run) -> None:
    for service in ("executor", "approval_web", "assistant"):
        done = run.podman("exec", f"{run.prefix}-{service}", "sh", "-c", "touch /opt/x", check=False)
        if done.returncode == 0 or "Read-only file system" not in done.stderr:
            raise Failed(f"{service} could write its root file system: {done.stderr}")
        run.say(f"{service}: a write to the root file system fails ({done.stderr.strip().split(': ')[-1]})")


def intrude(run: Run) -> list[dict]:
    """Run each intruder; every attempt must be refused. The lines printed."""
    mounts = [
        f"{run.volume('sockets')}:/run/fleetwatch",
        f"{run.volume('store')}:/var/lib/fleetwatch/store",
        f"{run.volume('executor-tokens')}:/var/lib/fleetwatch/executor-tokens",
        f"{run.volume('assistant-tokens')}:/var/lib/fleetwatch/assistant-tokens",
        f"{run.volume('web-state')}:/var/lib/fleetwatch/web",
        f"{INTRUDER}:/intruder.py:ro",
    ]
    lines: list[dict] = []
    for who, user, groups in INTRUDERS:
        done = run.one_off(
            user, "/opt/fleetwatch/venv/bin/python", "/intruder.py", volumes=mounts, groups=groups
        )
        print(f"intruder: {who}", flush=True)
        for line in done.stdout.splitlines():
            found = json.loads(line)
            if "intruder" in found:
                print(f"  as {found['intruder']}", flush=True)
                continue
            found["who"] = who
            lines.append(found)
            if found["refused"]:
                mark = "REFUSED"
            elif found["attempt"].startswith("connect"):
                mark = "PAST WALL"  # its folder's group let it in; the next line is the peer check
            else:
                mark = "NOT REFUSED"
            print(f"  {mark:<11} {found['attempt']}: {found['how']}", flush=True)
    allowed = [line for line in lines if not line["refused"] and not line["attempt"].startswith("connect")]
    if allowed:
        raise Failed(f"the intruder got through: {allowed}")
    peer = [line for line in lines if line["how"] == "peer_not_allowed"]
    if len(peer) != 3 * (len(INTRUDERS) - 1):
        raise Failed(f"the peer check did not refuse every socket for the grouped intruders: {peer}")
    return lines


def refusals_audited(run: Run) -> None:
    rows = json.loads(operator(run, "audit", "tail", "--json", "-n", "200").stdout)
    rows = rows if isinstance(rows, list) else rows.get("rows", [])
    refused = [
        r for r in rows if "peer" in json.dumps(r) and any(u in json.dumps(r) for u in ("10667", "65534"))
    ]
    run.say(f"audit: {len(refused)} rows name the refused intruders' uids")
    if not refused:
        raise Failed("no audit row names a refused intruder")
    verify = operator(run, "audit", "verify", check=False)
    run.say(f"fleetwatch audit verify: exit {verify.returncode}: {verify.stdout.strip().splitlines()[-1:]}")
    if verify.returncode != 0:
        raise Failed(f"audit verify failed: {verify.stdout}{verify.stderr}")


def cleanup(run: Run) -> None:
    """Remove the containers (at once: nothing in them is worth a graceful stop now), their
    volumes and, unless ``--keep-images``, the images."""
    names = run.podman("ps", "-a", "--format", "{{.Names}}", check=False).stdout.split()
    mine = [name for name in names if name.startswith(f"{run.prefix}-")]
    if mine:
        run.podman("rm", "-f", "-t", "0", *mine, check=False)
    # A volume still held by a container podman is tearing down (a ``--rm`` one, on a busy
    # machine) is not removed yet: try again for a while, then say what is left.
    for _attempt in range(20):
        volumes = run.podman("volume", "ls", "-q", check=False).stdout.split()
        mine = [volume for volume in volumes if volume.startswith(f"{run.project}_")]
        if not mine:
            break
        removed = run.podman("volume", "rm", "-f", *mine, check=False)
        if removed.returncode == 0:
            break
        time.sleep(0.5)
    else:
        run.say(f"volumes left behind: {' '.join(mine)} ({removed.stderr.strip()[-300:]})")
    if not run.keep_images:
        run.podman("rmi", "-f", run.image, run.base, check=False)


@contextlib.contextmanager
def prepared() -> Iterator[Run]:
    prefix = os.environ.get("FW_CONTAINER_PREFIX", "fw-ctest")
    work = Path(tempfile.mkdtemp(prefix=f"{prefix}-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETWATCH_")}
    env["FW_NAME"] = prefix  # the containers' names (compose.yaml), for `down` too
    run = Run(prefix, work, env)
    env["CONTAINERS_CONF"] = str(containers_conf(work))
    try:
        yield run
    finally:
        cleanup(run)
        shutil.rmtree(work, ignore_errors=True)
        run.say(f"cleaned up: containers, volumes{'' if run.keep_images else ' and images'} removed")


def main(argv: Sequence[str] = ()) -> int:
    if os.geteuid() != 0:
        print("container-test: needs root (rootful podman; see docs/container.md)", file=sys.stderr)
        return 2
    with prepared() as run:
        run.keep_images = "--keep-images" in argv
        try:
            if run.keep_images and run.podman("image", "exists", run.image, check=False).returncode == 0:
                run.say(f"reusing {run.image} (--keep-images)")
            else:
                build_base(run)
                run.say(
                    f"base image {run.base}: Debian minbase + {', '.join(BASE_PACKAGES)} (mmdebstrap, podman import)"
                )
                build_image(run)
                run.say(f"image {run.image} built from wheels made on the host")
            check_image(run)
            run.ports = {
                "FLEETWATCH_LAB_PORT": free_port(),
                "FLEETWATCH_MODEL_STANDIN_PORT": free_port(),
                "FLEETWATCH_APPROVE_PORT": free_port(),
                "FLEETWATCH_ASK_PORT": free_port(),
            }
            run.env.update(run.ports)
            run.env.update(
                FW_IMAGE=run.image,
                FLEETWATCH_EPIPHAN_MCP_URL=f"http://127.0.0.1:{run.ports['FLEETWATCH_LAB_PORT']}/mcp",
                FLEETWATCH_WRITE_DEVICE_IDS=sandbox_devices(run),
                FLEETWATCH_ANTHROPIC_API_KEY="lab-demo-model-key",
                FLEETWATCH_ANTHROPIC_BASE_URL=f"http://127.0.0.1:{run.ports['FLEETWATCH_MODEL_STANDIN_PORT']}",
                FLEETWATCH_HEARTBEAT_SECONDS="2",
            )
            run.compose("up", "-d")
            sockets = volume_path(run, "sockets")
            for rel in ("executor/executor.sock", "web/approval.sock", "assistant/assistant.sock"):
                wait_for(rel, (sockets / rel).is_socket)
            run.say(
                "compose stack up: executor, approval_web, assistant (users 10001, 10002, 10003), lab, model"
            )
            sign_in(run)
            run.say(
                "sign-ins placed: the sandbox team in the executor's slot, the normal team in the assistant's"
            )
            proposal_id = propose(run)
            run.say(
                f"the operator (uid 10020) asked; the assistant proposed {proposal_id}, waiting on the page"
            )
            approve(run, proposal_id)
            health(run)
            doctor_compose(run)
            read_only_roots(run)
            intrude(run)
            run.say("every intruder attempt was refused")
            refusals_audited(run)
        except Failed as exc:
            run.say(f"FAILED: {exc}")
            for service in ("executor", "approval_web", "assistant"):
                logs = run.podman("logs", "--tail", "15", f"{run.prefix}-{service}", check=False)
                print(f"--- {service}'s log\n{logs.stdout}{logs.stderr}", flush=True)
            return 1
        run.say("container test passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
