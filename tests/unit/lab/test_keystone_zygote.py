# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keystone forked from a server that imported keystone once (lab/regionlab/standins/keystone_zygote.py):
keystone-manage's real commands, with their own environment and stderr, exit codes as a process of their own
gives them, and a process of its own when the server cannot run; API servers in sessions of their own that
serve the real Keystone of their configuration, and say in their log why they cannot start."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import os
import signal
import socket
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
from regionlab.standins import keystone_zygote  # noqa: E402  pylint: disable=wrong-import-position

KEYSTONE_MANAGE = os.path.join(os.path.dirname(sys.executable), "keystone-manage")
ENV = dict(os.environ, PYTHONWARNINGS="ignore", PYTHONPATH=os.path.join(REPO, "lab"))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the module's tests (its start imports keystone), on a short socket path (sockaddr_un)."""
    saved = keystone_zygote.SOCKET, keystone_zygote._server  # pylint: disable=protected-access
    keystone_zygote.SOCKET = tmp_path_factory.mktemp("ksm") / "keystone-zygote.sock"
    keystone_zygote._server = {"proc": None}  # pylint: disable=protected-access
    yield keystone_zygote
    proc = keystone_zygote._server["proc"]  # pylint: disable=protected-access
    if proc is not None:
        proc.kill()
        proc.wait()
    keystone_zygote.SOCKET, keystone_zygote._server = saved  # pylint: disable=protected-access


def conf(tmp_path):
    """keystone.conf with a SQLite database and key repositories (as the stand-in writes them)."""
    lines = ["[database]", "connection = sqlite:///%s" % (tmp_path / "keystone.db"),
             "[identity]", "password_hash_rounds = 4"]
    for section in ("fernet_tokens", "credential"):
        keys = tmp_path / section
        if not keys.exists():
            keys.mkdir(mode=0o700)
            for index in range(3):
                (keys / str(index)).write_bytes(base64.urlsafe_b64encode(secrets.token_bytes(32)))
        lines += ["[%s]" % section, "key_repository = %s" % keys]
    lines += ["[fernet_receipts]", "key_repository = %s" % (tmp_path / "fernet_tokens")]
    path = tmp_path / "keystone.conf"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def run(server, tmp_path, *args, extra_env=None):
    with tempfile.TemporaryFile() as errors:
        proc = server.start([KEYSTONE_MANAGE, "--config-file", conf(tmp_path)] + list(args), ENV, extra_env or {},
                            errors)
        code = proc.wait()
        errors.seek(0)
        return proc, code, errors.read().decode()


def test_db_sync_and_bootstrap_run_forked_with_the_commands_environment(server, tmp_path):
    proc, code, _errors = run(server, tmp_path, "db_sync")
    assert isinstance(proc, keystone_zygote.Command) and code == 0
    assert proc.pid != os.getpid() and proc.poll() == 0
    proc, code, errors = run(server, tmp_path, "bootstrap", "--bootstrap-username", "admin",
                             "--bootstrap-project-name", "admin", "--bootstrap-role-name", "admin",
                             extra_env={"OS_BOOTSTRAP_PASSWORD": "lab-secret"})
    assert code == 0, errors
    with sqlite3.connect(str(tmp_path / "keystone.db")) as db:
        assert db.execute("select name from local_user").fetchall() == [("admin",)]
        hashed = db.execute("select password_hash from password").fetchone()[0]
    assert hashed.startswith("$2b$04$")  # bcrypt with the conf's 4 rounds: the child read its own config
    # The password reached that command only: the server's environment does not carry it.
    server_pid = server._server["proc"].pid  # pylint: disable=protected-access
    with open("/proc/%d/environ" % server_pid, "rb") as environ:
        assert b"lab-secret" not in environ.read()


def test_a_failing_command_reports_its_exit_code_and_stderr_as_a_process_of_its_own(server, tmp_path):
    # Without key repositories bootstrap stops at once, saying so on stderr.
    bare = tmp_path / "bare.conf"
    bare.write_text("[database]\nconnection = sqlite:///%s\n" % (tmp_path / "bare.db"))
    argv = [KEYSTONE_MANAGE, "--config-file", str(bare), "bootstrap", "--bootstrap-username", "admin"]
    with tempfile.TemporaryFile() as errors:
        proc = server.start(argv, ENV, {"OS_BOOTSTRAP_PASSWORD": "lab-secret"}, errors)
        code = proc.wait()
        errors.seek(0)
        forked = errors.read().decode()
    alone = subprocess.run(argv, env=dict(ENV, OS_BOOTSTRAP_PASSWORD="lab-secret"), capture_output=True, text=True,
                           check=False)
    assert isinstance(proc, keystone_zygote.Command)
    assert code == alone.returncode == 1
    assert forked == alone.stderr and "fernet-keys/ does not exist" in forked


def test_kill_ends_a_running_command_and_the_server_goes_on(server, tmp_path):
    config = conf(tmp_path)
    with sqlite3.connect(str(tmp_path / "keystone.db"), isolation_level=None) as lock, \
            tempfile.TemporaryFile() as errors:
        lock.execute("BEGIN EXCLUSIVE")  # db_sync waits for the database (SQLite's busy timeout)
        proc = server.start([KEYSTONE_MANAGE, "--config-file", config, "db_sync"], ENV, {}, errors)
        assert proc.poll() is None
        proc.kill()
        assert proc.wait() == -9
        lock.execute("ROLLBACK")
    assert run(server, tmp_path, "db_sync")[1] == 0


def test_without_a_server_a_command_is_a_process_of_its_own(server, tmp_path, monkeypatch):
    monkeypatch.setattr(keystone_zygote, "SOCKET", tmp_path / ("x" * 120) / "keystone-zygote.sock")
    monkeypatch.setattr(keystone_zygote, "_server", {"proc": None})
    proc, code, _errors = run(server, tmp_path, "db_sync")
    assert isinstance(proc, subprocess.Popen) and code == 0
    assert keystone_zygote._server["proc"] is None  # pylint: disable=protected-access


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_answer(url, pid, timeout=60.0):
    """GET url once the API server listens; fails when its process ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return requests.get(url, timeout=5)
        except requests.ConnectionError:
            assert os.path.exists("/proc/%d" % pid), "the API server exited"
            time.sleep(0.1)
    raise AssertionError("no answer from %s" % url)


def gone(pid, timeout=10.0):
    """Whether the process ended within timeout (the server reaps its children)."""
    deadline = time.monotonic() + timeout
    while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not os.path.exists("/proc/%d" % pid)


def test_an_api_server_serves_the_keystone_of_its_configuration_in_a_session_of_its_own(server, tmp_path):
    assert run(server, tmp_path, "db_sync")[1] == 0
    assert run(server, tmp_path, "bootstrap", "--bootstrap-username", "admin", "--bootstrap-project-name", "admin",
               "--bootstrap-role-name", "admin", extra_env={"OS_BOOTSTRAP_PASSWORD": "lab-secret"})[1] == 0
    port = free_port()
    with open(tmp_path / "api.log", "ab") as log:
        pid = server.start_api("keystone.wsgi.api", port, 2, 1, ENV, {"OS_KEYSTONE_CONFIG_FILES": conf(tmp_path)}, log)
    assert pid and pid != server._server["proc"].pid  # pylint: disable=protected-access
    try:
        assert os.getsid(pid) == pid and os.readlink("/proc/%d/exe" % pid) == os.path.realpath(sys.executable)
        base = "http://127.0.0.1:%d/v3" % port
        assert wait_answer(base, pid).json()["version"]["id"].startswith("v3.")
        # The admin of this configuration's database gets a token: the child read its own keystone.conf.
        auth = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"}, "password": "lab-secret"}}},
            "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
        answer = requests.post(base + "/auth/tokens", json=auth, timeout=30)
        assert answer.status_code == 201 and answer.headers["X-Subject-Token"]
        assert requests.post(base + "/auth/tokens", json=dict(auth, auth=dict(auth["auth"], identity={
            "methods": ["password"], "password": {"user": {"name": "admin", "domain": {"id": "default"},
                                                           "password": "wrong"}}})), timeout=30).status_code == 401
        with open("/proc/%d/environ" % server._server["proc"].pid, "rb") as environ:  # pylint: disable=protected-access
            assert b"OS_KEYSTONE_CONFIG_FILES" not in environ.read()
        # Two worker processes of one thread (upstream's uWSGI defaults), both in the server's session.
        workers = session_members(pid)
        assert len(workers) == 2 and pid in workers, workers
        # The admin creates application credentials while the admin's application credential is used beside
        # it: with one thread per process, Keystone's middleware (which keeps the request's token on itself)
        # never takes the credential's token for the admin's password token.
        token, user_id = answer.headers["X-Subject-Token"], answer.json()["token"]["user"]["id"]
        created = requests.post(base + "/users/%s/application_credentials" % user_id, headers={"X-Auth-Token": token},
                                json={"application_credential": {"name": "probe"}}, timeout=30).json()
        credential_token = requests.post(base + "/auth/tokens", timeout=30, json={"auth": {"identity": {
            "methods": ["application_credential"], "application_credential": {
                "id": created["application_credential"]["id"],
                "secret": created["application_credential"]["secret"]}}}}).headers["X-Subject-Token"]

        def call(index):
            if index % 2:
                return requests.get(base + "/auth/tokens", timeout=30, headers={
                    "X-Auth-Token": credential_token, "X-Subject-Token": credential_token}).status_code
            return requests.post(base + "/users/%s/application_credentials" % user_id, timeout=30,
                                 headers={"X-Auth-Token": token},
                                 json={"application_credential": {"name": "probe-%d" % index}}).status_code

        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(call, range(24)))
        assert answers == [201, 200] * 12
        # A worker goes with the first process, as uWSGI's workers go with their master.
        (worker,) = [w for w in workers if w != pid]
        os.kill(pid, signal.SIGKILL)
        assert gone(worker)
    finally:
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    assert gone(pid)


def session_members(sid):
    """The pids of the live processes in session sid."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid and open("/proc/%s/stat" % entry).read().split(")")[-1].split()[0] != "Z":
                    found.append(int(entry))
            except (OSError, IndexError):
                pass
    return found


def test_an_api_server_that_cannot_load_its_application_exits_saying_why(server, tmp_path):
    log_path = tmp_path / "api.log"
    with open(log_path, "ab") as log:
        pid = server.start_api("keystone.wsgi.lab_missing_app", free_port(), 2, 1, ENV, {}, log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "ModuleNotFoundError" not in log_path.read_text():
        time.sleep(0.1)
    assert log_path.read_text().strip().splitlines()[-1] == \
        "ModuleNotFoundError: No module named 'keystone.wsgi.lab_missing_app'"
    assert gone(pid)


def test_without_a_server_no_api_server_is_forked(tmp_path, monkeypatch):
    monkeypatch.setattr(keystone_zygote, "SOCKET", tmp_path / ("x" * 120) / "keystone-zygote.sock")
    monkeypatch.setattr(keystone_zygote, "_server", {"proc": None})
    with open(tmp_path / "api.log", "ab") as log:
        assert keystone_zygote.start_api("keystone.wsgi.api", free_port(), 2, 1, ENV, {}, log) is None
