"""Keystone's processes forked from one process that imported keystone once (the keystone-operator stand-in's
Jobs and Deployments).

A keystone-manage process spends about 2 CPU-s importing keystone (oslo, SQLAlchemy, the whole API) before
under a second of work, and a new Keystone CR waits for two of them in a row (db_sync, then bootstrap); its API
server spends 3-5 CPU-s importing the same before it answers. Here one server process per stand-in imports
keystone.cmd.manage and keystone.server.wsgi and forks a child per request, with nothing of keystone configured
before the fork (oslo.config parses in the child), so the child starts as a new process would:

- a command: the real keystone-manage (its `main`, with the command's argv, environment additions and stderr);
  `Command` is what the stand-in's Job needs of a Popen;
- an API server: a session of its own (the lab stops it as any lab process, `processes.stop`) that imports
  the WSGI application module as uWSGI's `--wsgi` would (keystone.wsgi.api builds the application from
  OS_KEYSTONE_CONFIG_FILES) and serves it on loopback with the worker processes and threads the request names
  (uWSGI's --processes and --threads with --lazy-apps: every worker builds the application after the fork and
  accepts on the one listening socket), writing to its log; it outlives the server and the stand-in, as uWSGI
  did. Keystone keeps the request's token on its shared middleware (AuthContextMiddleware.token), so two threads
  of one process can mix two requests' tokens: upstream's Keystone runs one thread per process by default.

Without a server (it did not come up), commands run as processes of their own and API servers under uWSGI.

The server listens on a Unix socket (SOCK_SEQPACKET: one message per request, the stderr or log file passed
along with it) in the lab's run directory, which only the lab's user can enter, and exits with its parent.
"""

import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from socketserver import ThreadingMixIn
from wsgiref import simple_server

from .. import processes

SOCKET = processes.RUN / "keystone-zygote.sock"
# What marks a forked API server in its pid file: its command line is the server's.
MARKER = "regionlab.standins.keystone_zygote"
START_TIMEOUT = 60.0
_server = {"proc": None}
_lock = threading.Lock()


def serve(path):
    """Import keystone-manage and the API once, then fork a child per request until the parent goes."""
    from keystone.cmd import manage  # the import every command shares
    importlib.import_module("keystone.server.wsgi")  # what every API server imports
    parent = os.getppid()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the children
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(16)
    listener.settimeout(1.0)
    while os.getppid() == parent:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            continue
        conn.settimeout(None)
        try:
            message, fds, _flags, _address = socket.recv_fds(conn, 65536, 1)
            request = json.loads(message)
        except (OSError, ValueError):
            conn.close()
            continue
        if os.fork() == 0:
            listener.close()
            if request.get("api"):
                _api_child(conn, fds[0] if fds else None, request["api"])
            _child(conn, fds[0] if fds else None, request, manage)
        conn.close()
        for fd in fds:
            os.close(fd)


def _child(conn, stderr_fd, request, manage):
    """Run keystone-manage's main with the request's argv and environment; report pid and exit code."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        if stderr_fd is not None:
            os.dup2(stderr_fd, 2)
        os.environ.update(request.get("env") or {})
        sys.argv = ["keystone-manage"] + list(request["args"])
        conn.send(json.dumps({"pid": os.getpid()}).encode())
        # As the keystone-manage script: sys.exit(main()).
        try:
            code = _exit_code(manage.main())
        except SystemExit as exc:
            code = _exit_code(exc.code)
        except BaseException:  # noqa: BLE001 -- an uncaught exception, as the interpreter reports it
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        conn.send(json.dumps({"returncode": code}).encode())
    finally:
        os._exit(code)


class _APIServer(ThreadingMixIn, simple_server.WSGIServer):
    """A WSGI server on loopback: at most `threads` requests at once, each answer closes its connection.

    A worker takes a connection only with a free thread, so a busy worker leaves the next one to another
    worker accepting on the same socket."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, threads):
        self._slots = threading.BoundedSemaphore(threads)
        super().__init__(address, _QuietHandler)

    def server_bind(self):
        # HTTPServer's would look the address up with getfqdn; loopback needs no name.
        simple_server.HTTPServer.server_bind(self)  # pylint: disable=non-parent-method-called
        self.server_name, self.server_port = self.server_address[:2]
        self.setup_environ()

    def get_request(self):
        self._slots.acquire()  # pylint: disable=consider-using-with -- released when the request is done
        try:
            return super().get_request()
        except BaseException:
            self._slots.release()
            raise

    def process_request(self, request, client_address):
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class _QuietHandler(simple_server.WSGIRequestHandler):
    """No line per request in the log (uWSGI's --disable-logging); errors still go to stderr."""

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        pass


def _api_child(conn, log_fd, api):
    """An API server: its own session, the application of api["module"] served on 127.0.0.1:api["port"] by
    api["processes"] workers (this process and its children) of api["threads"] threads each."""
    code = 1
    try:
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        if log_fd is not None:
            os.dup2(log_fd, 1)
            os.dup2(log_fd, 2)
            os.close(log_fd)
        os.environ.update(api.get("env") or {})
        sys.argv = ["keystone-wsgi-public"]  # oslo.config parses the command line too: not the server's
        conn.send(json.dumps({"pid": os.getpid()}).encode())
        conn.close()
        try:
            server = _APIServer(("127.0.0.1", int(api["port"])), int(api["threads"]))
        except BaseException:  # noqa: BLE001 -- why it cannot start, as uWSGI's log says it, then exit
            traceback.print_exc()
            return
        for unused in range(int(api.get("processes") or 1) - 1):
            if os.fork() == 0:
                _die_with_parent()
                break
        try:
            application = importlib.import_module(api["module"]).application  # --lazy-apps: in each worker
        except BaseException:  # noqa: BLE001 -- --need-app: no application, no server (the workers go with it)
            if os.getpid() == os.getsid(0):
                traceback.print_exc()  # once in the log: every worker fails the same way
            return
        print("keystone: %s serving on %s:%d (worker %d)" % (api["module"], *server.server_address[:2], os.getpid()),
              flush=True)
        server.set_app(application)
        server.serve_forever()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _die_with_parent():
    """A worker goes with the API server's first process, as uWSGI's workers go with their master."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _exit_code(value):
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    sys.stderr.write("%s\n" % value)
    return 1


def _server_socket(env):
    """The server's socket path once it listens (started on first use); None when it cannot run."""
    path = str(SOCKET)
    if len(path.encode()) > 100:  # sockaddr_un holds 108 bytes
        return None
    with _lock:
        proc = _server["proc"]
        if proc is None or proc.poll() is not None:
            if os.path.exists(path):
                os.unlink(path)
            proc = _server["proc"] = subprocess.Popen(
                [sys.executable, "-m", MARKER, path], env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while not os.path.exists(path):
            if proc.poll() is not None or time.monotonic() > deadline:
                return None
            time.sleep(0.05)
    return path


class Command:
    """A forked keystone-manage: pid, poll(), wait(), kill() and returncode, as of a Popen."""

    def __init__(self, path, args, env, stderr):
        self.returncode = None
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._sock.connect(path)
            socket.send_fds(self._sock, [json.dumps({"args": list(args), "env": env}).encode()], [stderr.fileno()])
            self.pid = json.loads(self._sock.recv(4096))["pid"]
        except (OSError, ValueError, KeyError):
            self._sock.close()
            raise OSError("the keystone-manage server did not take the command")

    def poll(self):
        # The Job's thread reads the report (wait); poll only says what it has read.
        return self.returncode

    def wait(self):
        if self.returncode is None:
            message = self._sock.recv(4096)
            # No report: the child died of a signal (kill() sends SIGKILL).
            self.returncode = json.loads(message)["returncode"] if message else -signal.SIGKILL
            self._sock.close()
        return self.returncode

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def start(argv, env, extra_env, stderr):
    """keystone-manage <argv[1:]> forked from the server, else a process of its own (argv as given).

    env: the whole environment of a process of its own (the server is started with it); extra_env: what
    this command adds to it (e.g. the bootstrap password, which thus never reaches a command line)."""
    path = _server_socket(env)
    if path is not None:
        try:
            return Command(path, argv[1:], extra_env, stderr)
        except OSError:
            pass
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr, stdin=subprocess.DEVNULL,
                            env=dict(env, **extra_env))


def start_api(module, port, processes_, threads, env, extra_env, log):
    """The pid of an API server forked from the server: module's `application` on 127.0.0.1:port with
    `processes_` worker processes of `threads` threads, its output appended to the file log; None when there is
    no server to fork it.

    env: the environment the server is started with (see start); extra_env: what this API server adds to it."""
    path = _server_socket(env)
    if path is None:
        return None
    request = {"api": {"module": module, "port": port, "processes": processes_, "threads": threads,
                       "env": extra_env}}
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as sock:
        try:
            sock.connect(path)
            socket.send_fds(sock, [json.dumps(request).encode()], [log.fileno()])
            return json.loads(sock.recv(4096))["pid"]
        except (OSError, ValueError, KeyError):
            return None


if __name__ == "__main__":
    serve(sys.argv[1])
