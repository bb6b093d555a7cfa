# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module processes forked from a warm interpreter instead of started cold (the lab's venv only).

Each module task on a local connection starts `/bin/sh -c '<python> <tmp>/AnsiballZ_<name>.py && sleep 0'`:
a new interpreter that imports `site` and `ansible.module_utils.basic` before the module does anything,
about 0.2 CPU-s of a module run that takes ~0.3. ansible-playbook (through the venv hook,
cobaltcore_ansiballz_bytecode) starts one zygote per run: a Python process of the same interpreter that
has imported ansible-core's `ansible.module_utils.basic`, the AnsiballZ loader and the standard library's and
PyYAML's modules the collection's module_utils use, as a module process does (not the controller:
`ansible._internal` is never imported, so module_utils keep their target behaviour).
For such a command the local connection asks the zygote instead, over a Unix socket in a private
directory, handing over the command's stdin, stdout and stderr; the zygote forks a process that takes
them, the environment, working directory and arguments the command would have had, and runs the same
AnsiballZ file as `__main__`. The wrapper unpacks its zip and imports the module and the collection's
module_utils from it as before (nothing of the collection is preloaded, so a module_utils missing from
the zip still fails). The exit status the connection gets is that process's, a signal as a negative
number, as from subprocess.

Everything else runs as before: any other command, a command with an environment prefix the zygote
cannot reproduce, a connection with become, and every command while the zygote cannot be reached.
The zygote ends with the ansible-playbook process that started it (it polls its parent).
"""
from __future__ import annotations

import array
import base64
import importlib
import io
import json
import os
import selectors
import shlex
import shutil
import signal
import socket
import struct
import sys
import tempfile
import zipfile

COMMAND_ENV = "COBALTCORE_MODULE_ZYGOTE"
# A module whose zip carries openstack.cloud's module base imports the OpenStack SDK: ~0.7 CPU-s of each such run.
IMPORTS_BY_ZIP_ENTRY = {"ansible_collections/openstack/cloud/plugins/module_utils/openstack.py": "openstack"}
_LOOKED_INTO = set()  # the AnsiballZ file names whose zips preload_for() read: each module's once per run
_UNIMPORTABLE = set()  # packages of IMPORTS_BY_ZIP_ENTRY that failed to import: not tried again
HEADER = struct.Struct("!I")
STATUS = struct.Struct("!i")
PARENT_POLL = 1.0


# -- the client's side (ansible-playbook's workers) ------------------------------------------------

def module_command(cmd, interpreter):
    """(environment, AnsiballZ path) of a local connection's module command run by `interpreter`, else None.

    Only the exact form Ansible builds without pipelining: `/bin/sh -c '[NAME=value ...] <python>
    <dir>/AnsiballZ_<name>.py && sleep 0'`, with `<python>` this interpreter."""
    if not isinstance(cmd, str):
        return None
    try:
        outer = shlex.split(cmd)
        if len(outer) != 3 or outer[0] != "/bin/sh" or outer[1] != "-c":
            return None
        words = shlex.split(outer[2])
    except ValueError:
        return None
    if len(words) < 5 or words[-3:] != ["&&", "sleep", "0"]:
        return None
    env = {}
    for word in words[:-5]:
        name, sep, value = word.partition("=")
        if not sep or not name.replace("_", "a").isalnum() or name[0].isdigit():
            return None
        env[name] = value
    python, path = words[-5], words[-4]
    if os.path.realpath(python) != os.path.realpath(interpreter):
        return None
    name = os.path.basename(path)
    if not (os.path.isabs(path) and name.startswith("AnsiballZ_") and name.endswith(".py")):
        return None
    return env, path


class NotStarted(OSError):
    """The zygote did not take the request: nothing ran, the command may run the usual way."""


def run(socket_path, path, env, cwd=None, stdin_data=b""):
    """Run the AnsiballZ file `path` in a process forked by the zygote; (rc, stdout, stderr) as bytes.

    Raises NotStarted when the zygote cannot take the request. Once it has it, the module is never run again:
    a zygote that ends before it reports the exit status gives status 1 and says so on stderr."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    pipes = []
    try:
        try:
            conn.connect(socket_path)
            stdin_r, stdin_w = os.pipe()
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            pipes = [stdin_r, stdin_w, out_r, out_w, err_r, err_w]
            environment = dict(os.environ)
            environment.update(env)
            header = json.dumps({"path": path, "env": environment, "cwd": cwd or os.getcwd()}).encode()
            conn.sendmsg([HEADER.pack(len(header)) + header],
                         [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [stdin_r, out_w, err_w]))])
        except OSError as error:
            raise NotStarted(str(error)) from error
        for fd in (stdin_r, out_w, err_w):
            os.close(fd)
            pipes.remove(fd)
        try:
            if stdin_data:
                os.write(stdin_w, stdin_data)
        finally:
            os.close(stdin_w)
            pipes.remove(stdin_w)
        output = _read_until_closed(out_r, err_r)
        status = _recv_exactly(conn, STATUS.size)
        if len(status) != STATUS.size:
            return 1, output[out_r], output[err_r] + b"\nthe module zygote ended before it reported the exit status\n"
        return STATUS.unpack(status)[0], output[out_r], output[err_r]
    finally:
        for fd in pipes:
            os.close(fd)
        conn.close()


def _read_until_closed(*fds):
    chunks = dict((fd, []) for fd in fds)
    with selectors.DefaultSelector() as selector:
        for fd in fds:
            selector.register(fd, selectors.EVENT_READ)
        open_fds = set(fds)
        while open_fds:
            for key, _events in selector.select():
                data = os.read(key.fd, 65536)
                if data:
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
                    open_fds.discard(key.fd)
    return dict((fd, b"".join(parts)) for fd, parts in chunks.items())


def _recv_exactly(conn, size):
    data = b""
    while len(data) < size:
        try:
            part = conn.recv(size - len(data))
        except OSError:
            break
        if not part:
            break
        data += part
    return data


# -- the zygote ---------------------------------------------------------------------------------

def preload():
    """What a module run imports before its module: ansible-core's module_utils and the AnsiballZ loader; and the
    standard library's and PyYAML's modules the collection's module_utils import, from where a module run takes
    them (the collection itself is left to each module's zip)."""
    # pylint: disable=import-outside-toplevel,unused-import
    import base64
    import calendar
    import concurrent.futures.thread
    import datetime
    import glob
    import hashlib
    import http.client
    import ipaddress
    import random
    import runpy
    import secrets
    import ssl
    import subprocess
    import threading
    import zipfile
    import yaml
    import ansible.module_utils.basic
    from ansible.module_utils._internal._ansiballz import _loader


def start(interpreter=sys.executable):
    """Start a zygote for this process (its parent); returns (process, socket path) once it listens."""
    import subprocess  # pylint: disable=import-outside-toplevel
    directory = tempfile.mkdtemp(prefix="cobaltcore-zygote-")
    path = os.path.join(directory, "socket")
    ready_r, ready_w = os.pipe()
    process = subprocess.Popen([interpreter, "-m", "cobaltcore_module_zygote", path, str(ready_w)],
                               pass_fds=[ready_w], stdin=subprocess.DEVNULL, close_fds=True)
    os.close(ready_w)
    try:
        ready = os.read(ready_r, 1)
    finally:
        os.close(ready_r)
    if ready != b"1":
        process.wait()
        shutil.rmtree(directory, ignore_errors=True)
        raise OSError("the module zygote did not start")
    return process, path


def serve(path, ready_fd=None):
    """Accept requests on `path` until the parent process ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C reaches the module processes, not their zygote
    signal.signal(signal.SIGTERM, _exit_on_signal)  # the run's end: clean up the socket's directory
    parent = os.getppid()
    preload()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(64)
    if ready_fd is not None:
        os.write(ready_fd, b"1")
        os.close(ready_fd)
    waiting = {}  # pid -> the connection that gets its exit status
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_r, selectors.EVENT_READ)
    try:
        while os.getppid() == parent:
            for key, _events in selector.select(PARENT_POLL):
                if key.fileobj is listener:
                    conn = listener.accept()[0]
                    pid = _fork_module(conn, listener)
                    if pid is None:
                        conn.close()
                    else:
                        waiting[pid] = conn
                else:
                    os.read(wake_r, 4096)
            _reap(waiting)
    finally:
        for conn in waiting.values():
            conn.close()
        listener.close()
        try:
            os.unlink(path)
            os.rmdir(os.path.dirname(path))
        except OSError:
            pass


def _exit_on_signal(signum, frame):
    raise SystemExit(0)


def _reap(waiting):
    while waiting:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is None:
            continue
        code = os.waitstatus_to_exitcode(status)
        try:
            conn.sendall(STATUS.pack(code))
        except OSError:
            pass
        conn.close()


def _receive(conn):
    """The request: its header and the three file descriptors (stdin, stdout, stderr)."""
    fds = array.array("i")
    data, ancillary, _flags, _address = conn.recvmsg(1 << 20, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
    if len(data) < HEADER.size or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    size = HEADER.unpack(data[:HEADER.size])[0]
    data = data[HEADER.size:]
    while len(data) < size:
        part = conn.recv(size - len(data))
        if not part:
            break
        data += part
    if len(data) != size:
        for fd in fds:
            os.close(fd)
        return None
    return json.loads(data.decode()), list(fds)


def preload_for(path, imports=None):
    """Import a costly package once the first module that imports it comes (its zip carries the module_utils
    file that imports it: IMPORTS_BY_ZIP_ENTRY), so that this module and every one after it find it imported;
    a run without such a module never pays for it. The OpenStack SDK takes its configuration's search path
    (the working directory, HOME) at import: the zygote's, which are its ansible-playbook's, as the module
    commands' are."""
    imports = IMPORTS_BY_ZIP_ENTRY if imports is None else imports
    missing = {entry: name for entry, name in imports.items() if name not in sys.modules and name not in _UNIMPORTABLE}
    module = os.path.basename(path)  # AnsiballZ_<module>.py: a module's zip is the same for the whole run
    if not missing or module in _LOOKED_INTO:
        return
    _LOOKED_INTO.add(module)
    try:
        with open(path, "rb") as handle:
            text = handle.read()
        start = text.rindex(b"\nzip_data='") + len(b"\nzip_data='")  # the wrapper's last argument
        with zipfile.ZipFile(io.BytesIO(base64.b64decode(text[start:text.index(b"'", start)]))) as archive:
            entries = set(archive.namelist())
    except (OSError, ValueError, zipfile.BadZipFile):
        return
    for entry, name in missing.items():
        if entry in entries:
            try:
                importlib.import_module(name)
            except ImportError:
                _UNIMPORTABLE.add(name)


def _fork_module(conn, listener):
    request = _receive(conn)
    if request is None:
        return None
    header, fds = request
    preload_for(header["path"])
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    # The module process: nothing of the zygote but its interpreter and imports.
    code = 1
    try:
        listener.close()
        conn.close()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.closerange(3, 65536)
        # pylint: disable=consider-using-with
        sys.stdin = open(0, "r", encoding="utf-8", errors="surrogateescape", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        os.environ.clear()
        os.environ.update(header["env"])
        os.chdir(header["cwd"])
        path = header["path"]
        # As for `python <path>`: the script's directory first, then the interpreter's own path.
        sys.path[0] = os.path.dirname(path)
        sys.argv = [path]
        import runpy  # pylint: disable=import-outside-toplevel
        try:
            runpy.run_path(path, run_name="__main__")
            code = 0
        except SystemExit as exit_:
            if exit_.code is None:
                code = 0
            elif isinstance(exit_.code, int):
                code = exit_.code
            else:
                sys.stderr.write("%s\n" % exit_.code)
                code = 1
    except BaseException:  # pylint: disable=broad-except
        import traceback  # pylint: disable=import-outside-toplevel
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code & 0xFF)  # pylint: disable=protected-access
    return None  # not reached


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)
