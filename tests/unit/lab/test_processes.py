# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""regionlab.processes and the lab's load balancers: a process restarted by someone else while it was being stopped
keeps its pid file; a closed relay releases its address."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import os
import socket
import sys
import time

import pytest

from conftest import REPO

sys.path.insert(0, os.path.join(str(REPO), "lab"))

from regionlab import processes  # noqa: E402  pylint: disable=wrong-import-position


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(processes, "RUN", tmp_path / "run")
    monkeypatch.setattr(processes, "LOGS", tmp_path / "logs")
    return tmp_path


def sleeper():
    return [sys.executable, "-c", "import time; time.sleep(60)", "lab-test-sleeper"]


def test_stop_leaves_the_pid_file_of_a_process_started_again_meanwhile(run_dir, monkeypatch):
    processes.adopt("member", 111, sys.executable, "")
    running = {111}

    def killpg(pid, sig):
        running.discard(pid)

    def alive(pid):
        # The stand-in's loop sees the member gone and starts it again (pid 222) while stop() still looks at 111.
        if pid == 111 and 111 not in running and 222 not in running:
            running.add(222)
            processes.adopt("member", 222, sys.executable, "")
        return pid in running
    monkeypatch.setattr(processes, "pid_of", lambda name: processes._read_pid_file(name)[0]
                        if (run_dir / "run" / ("%s.pid" % name)).exists() and
                        processes._read_pid_file(name)[0] in running else None)
    monkeypatch.setattr(processes.os, "killpg", killpg)
    monkeypatch.setattr(processes, "_alive", alive)
    processes.stop("member")
    assert processes._read_pid_file("member")[0] == 222 and processes.pid_of("member") == 222


def test_stop_removes_the_pid_file_of_the_process_it_stopped(run_dir):
    pid = processes.start("member", sleeper(), marker="lab-test-sleeper")
    # Until the child has exec'd its program, /proc shows the parent's argument list, without the marker.
    deadline = time.monotonic() + 10
    while processes.pid_of("member") is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes.pid_of("member") == pid
    started = time.monotonic()
    processes.stop("member")
    assert processes.pid_of("member") is None and not (run_dir / "run" / "member.pid").exists()
    assert time.monotonic() - started < 10


def test_a_closed_relay_releases_its_address_for_the_next_one():
    from regionlab import ovn  # noqa: E402  pylint: disable=import-outside-toplevel
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    first = ovn.Relay("127.0.0.1", port, [])
    time.sleep(0.2)  # its accept thread waits
    first.close()
    second = ovn.Relay("127.0.0.1", port, [])
    second.close()
