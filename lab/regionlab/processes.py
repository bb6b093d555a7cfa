"""Start, find and stop the lab's background processes.

Each process has a pid file under .lab/run and a log under .lab/logs. A
process counts as running only when its pid is alive and its command line
still runs the binary we started, so a stale pid file never matches a
recycled pid.
"""

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import requests

from . import config

RUN = config.STATE / "run"
LOGS = config.STATE / "logs"


def _pid_file(name):
    return RUN / ("%s.pid" % name)


def _exe(pid):
    # The executable, not argv[0]: uWSGI, for one, renames its processes.
    try:
        return os.readlink("/proc/%d/exe" % pid)
    except OSError:
        return None


def _cmdline(pid):
    try:
        return Path("/proc/%d/cmdline" % pid).read_bytes().split(b"\0")
    except OSError:
        return []


def _read_pid_file(name):
    """(pid, binary, marker) of a pid file; raises OSError, ValueError or IndexError when there is none."""
    lines = _pid_file(name).read_text().split("\n")
    return int(lines[0]), lines[1].strip(), lines[2].strip() if len(lines) > 2 else ""


def pid_of(name):
    """The pid of a running lab process, or None."""
    try:
        pid, binary, marker = _read_pid_file(name)
    except (OSError, ValueError, IndexError):
        return None
    if not binary or _exe(pid) != os.path.realpath(binary):
        return None
    # An interpreter runs many programs: its argument list must still name ours.
    if marker and marker.encode() not in _cmdline(pid):
        return None
    return pid


def argv_of(name):
    """The argument list of a running lab process, None when it does not run."""
    pid = pid_of(name)
    if pid is None:
        return None
    return [a.decode() for a in _cmdline(pid)[:-1]]  # /proc's list ends with a NUL


def start(name, argv, env=None, cwd=None, marker=None):
    """Start argv in its own session, logging to .lab/logs/<name>.log.

    marker: an argument that identifies the process when argv[0] is an interpreter.
    """
    RUN.mkdir(parents=True, exist_ok=True)
    LOGS.mkdir(parents=True, exist_ok=True)
    log = open(LOGS / ("%s.log" % name), "ab")
    proc = subprocess.Popen(
        [str(a) for a in argv], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        env=dict(os.environ, **(env or {})), cwd=cwd, start_new_session=True)
    log.close()
    adopt(name, proc.pid, argv[0], marker or "")
    return proc.pid


def ensure(name, argv, env=None):
    """Start argv as `name` unless it runs with exactly these arguments; one that runs with others (a lab
    started before its flags changed) is stopped first."""
    argv = [str(a) for a in argv]
    running = argv_of(name)
    if running == argv:
        return
    if running is not None:
        stop(name)
    start(name, argv, env=env)


def adopt(name, pid, binary, marker):
    """Record a process started elsewhere (forked by a lab process) as the lab process `name`."""
    RUN.mkdir(parents=True, exist_ok=True)
    _pid_file(name).write_text("%d\n%s\n%s\n" % (pid, binary, marker))


def running():
    """Names of all lab processes that are alive."""
    if not RUN.exists():
        return []
    return sorted(p.stem for p in RUN.glob("*.pid") if pid_of(p.stem))


def stop(name, timeout=15):
    """Stop a process and its session: SIGTERM, then SIGKILL after timeout."""
    pid = pid_of(name)
    if pid:
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5)):
            if pid_of(name) != pid:
                break  # gone, or the pid now belongs to another program
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.1)
            if not _alive(pid):
                break
        if _alive(pid) and pid_of(name) == pid:
            return  # still ours and alive: keep the pid file so status and down see it
        try:
            if _read_pid_file(name)[0] != pid:
                return  # another process (a stand-in restarting it) started it again meanwhile: its pid file stays
        except (OSError, ValueError, IndexError):
            return
    _pid_file(name).unlink(missing_ok=True)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie of ours is dead for every purpose here.
    try:
        state = Path("/proc/%d/stat" % pid).read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    if state == "Z":
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        return False
    return True


def require(files, what):
    """Fail naming the Debian packages (tests/debian-packages.sh installs them) whose files are missing:
    files maps a path to its package."""
    missing = sorted({package for path, package in files.items() if not Path(path).exists()})
    if missing:
        raise RuntimeError("%s is not installed here: apt-get install %s (tests/debian-packages.sh does)"
                           % (what, " ".join(missing)))


def run_tool(*argv, env=None, timeout=120, check=True):
    """Run a command-line tool to its end (its output captured); with check, a non-zero exit raises naming the tool
    and the end of what it said."""
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, check=False,
                            env=env)
    if check and result.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (Path(str(argv[0])).name, result.returncode,
                                                   (result.stderr or result.stdout).strip()[-500:]))
    return result


def answers(url):
    """The lab server at url answers 2xx (a health or readiness endpoint)."""
    try:
        return requests.get(url, timeout=2).ok
    except requests.RequestException:
        return False


def port_open(port, host="127.0.0.1"):
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def why_not_running(name):
    """Why pid_of(name) finds no process: for the message of a start that failed."""
    try:
        pid, binary, marker = _read_pid_file(name)
    except (OSError, ValueError, IndexError) as error:
        return "no readable pid file (%s)" % error
    if not _alive(pid):
        return "pid %d exited" % pid
    exe = _exe(pid)
    if exe != os.path.realpath(binary):
        return "pid %d runs %s, not %s" % (pid, exe, os.path.realpath(binary))
    return "pid %d does not run %s" % (pid, marker or binary)


def wait_until(predicate, timeout, what, log_name=None):
    """Poll predicate until it is true; fail naming what did not come up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # Our process first: a foreign server on the same port must not pass for ours. Twice, 0.5 s
        # apart: a reading of /proc during the process's start must not count as its end.
        if log_name and not pid_of(log_name):
            time.sleep(0.5)
            if not pid_of(log_name):
                raise RuntimeError("%s: process exited (%s); see %s" % (
                    what, why_not_running(log_name), LOGS / ("%s.log" % log_name)))
        if predicate():
            return
        time.sleep(0.2)
    hint = " ; see %s" % (LOGS / ("%s.log" % log_name)) if log_name else ""
    raise RuntimeError("%s: not ready after %ss%s" % (what, timeout, hint))


def memory_bytes(name):
    """(resident, proportional) memory of a lab process and its children: their RSS summed, and their PSS summed - the
    pages they share (one binary's eight API servers, a zygote's forks) counted once over all who map them."""
    pid = pid_of(name)
    if not pid:
        return 0, 0
    totals = {"Rss:": 0, "Pss:": 0}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            sid = int(stat.rsplit(")", 1)[1].split()[3])
            if sid != pid:
                continue
            for line in (proc / "smaps_rollup").read_text().splitlines():
                field = line.split()
                if field and field[0] in totals:
                    totals[field[0]] += int(field[1]) * 1024
        except (OSError, ValueError, IndexError):
            continue
    return totals["Rss:"], totals["Pss:"]
