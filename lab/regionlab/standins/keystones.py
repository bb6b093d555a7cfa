"""The real Keystones behind Keystone CRs: one per CR, each with its own port, database and keys.

What the keystone-operator stand-in (keystone_operator.py) runs for a Keystone CR
<namespace>/<name>, and what `regionlab status` reads back:

- a directory $COBALTCORE_LAB_DIR/keystones/<namespace>/<name>/ (mode 0700) with keystone.conf,
  the SQLite database keystone.db (0600), the key repositories fernet-keys/ and credential-keys/
  (files 0 .. maxActiveKeys-1, 0600) and state.json (the CR's uid, whether db_sync ran, the digest
  of the admin password the last bootstrap used);
- a loopback port from config.KEYSTONE_CR_PORTS (base+100 .. base+199): the lowest free one when
  the CR is first seen, recorded in keystones/ports.json and kept until the CR is deleted;
- a lab process keystone-cr.<namespace>.<name>: the API server, keystone.wsgi.api served on 127.0.0.1:<port>
  by the CR's spec.uwsgi processes and threads (upstream's defaults: two processes of one thread), logging to
  logs/keystone-cr.<namespace>.<name>.log; forked from the process that imported keystone once
  (keystone_zygote.py), else uWSGI;
- a lab process keystone-cache-cr.<namespace>.<name>: the memcached its keystone.conf caches in
  (memcached.py; port + KEYSTONE_CR_CACHE_OFFSET), started before the first keystone-manage, as the
  seed's Keystone CR names the ControlPlane's Memcached in spec.cache.

The key repositories are the kubelet's projection of the <name>-fernet-keys and <name>-credential-keys
Secrets, which the keystone-operator stand-in keeps and rotates as upstream does (key_rotation.py).
`keystone-manage db_sync` and `keystone-manage bootstrap` run as processes of their own, as the
operator's Jobs run them (forked from the same process); the admin password reaches bootstrap through
OS_BOOTSTRAP_PASSWORD, never argv.
"""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import requests

from .. import config, memcached, pki, processes
from . import keystone_zygote

PREFIX = "keystone-cr."
CACHE_PREFIX = "keystone-cache-cr."  # each one's memcached (not under PREFIX: its name would not parse)
VENV_BIN = Path(sys.executable).parent
REGISTRY = config.KEYSTONES / "ports.json"
# spec.uwsgi's defaults upstream (internal/common/types: DefaultUWSGIProcesses, DefaultUWSGIThreads).
DEFAULT_PROCESSES = 2
DEFAULT_THREADS = 1
API_MODULE = "keystone.wsgi.api"
# A module that does not exist: the API server of a Keystone whose start fails (standins.yaml fail_start).
MISSING_API_MODULE = "keystone.wsgi.lab_missing_app"
# What the stand-in's processes and the API servers forked for it run with.
ENV = {"PYTHONWARNINGS": "ignore"}


def concurrency(spec):
    """(processes, threads) of a Keystone CR's API server: spec.uwsgi's, each defaulted below 1 as upstream's
    EffectiveUWSGIConcurrency does."""
    uwsgi = (spec or {}).get("uwsgi") or {}
    processes_, threads = uwsgi.get("processes"), uwsgi.get("threads")
    return (processes_ if isinstance(processes_, int) and processes_ >= 1 else DEFAULT_PROCESSES,
            threads if isinstance(threads, int) and threads >= 1 else DEFAULT_THREADS)


def process_name(namespace, name):
    # Namespaces have no dots, so the first dot after the prefix separates namespace and name.
    return "%s%s.%s" % (PREFIX, namespace, name)


def cache_process_name(namespace, name):
    return "%s%s.%s" % (CACHE_PREFIX, namespace, name)


def url_of(port):
    return "http://127.0.0.1:%d/v3" % port


# Registry ----------------------------------------------------------------------

def read_registry():
    """{"<namespace>/<name>": {"port": int, "uid": str}} of the Keystones the stand-in keeps."""
    try:
        return json.loads(REGISTRY.read_text())
    except (OSError, ValueError):
        return {}


def write_registry(registry):
    REGISTRY.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = REGISTRY.with_name(".ports.json.tmp")
    temp.write_text(json.dumps(registry, indent=1, sort_keys=True) + "\n")
    os.replace(temp, REGISTRY)


def free_port(registry):
    """The lowest port of the range that no registered Keystone holds and nothing listens on."""
    taken = {entry["port"] for entry in registry.values()}
    for port in config.KEYSTONE_CR_PORTS:
        if (port not in taken and not processes.port_open(port)
                and not processes.port_open(port + config.KEYSTONE_CR_CACHE_OFFSET)):
            return port
    return None


def status():
    """What `regionlab status` shows: every registered Keystone, its URL and whether it answers."""
    out = []
    for key, entry in sorted(read_registry().items()):
        namespace, name = key.split("/", 1)
        url = url_of(entry["port"])
        process = process_name(namespace, name)
        out.append({"namespace": namespace, "name": name, "url": url, "process": process,
                    "ready": bool(processes.pid_of(process)) and probe(url, 1.0)[0]})
    return out


def probe(url, timeout=2.0):
    """(healthy, reason, detail): GET <url> as upstream's health check does (2xx is healthy).

    Reasons as upstream classifies them: APIUnhealthy (an HTTP error), HealthCheckTimeout,
    ConnectionFailed; detail is stable text (no object addresses), so a status does not churn.
    """
    try:
        resp = requests.get(url, timeout=timeout)
    except requests.Timeout:
        return False, "HealthCheckTimeout", "no answer within %ss" % timeout
    except requests.ConnectionError as exc:
        return False, "ConnectionFailed", "connection refused" if "refused" in str(exc) else "connection failed"
    except requests.RequestException as exc:
        return False, "ConnectionFailed", type(exc).__name__
    if 200 <= resp.status_code < 300:
        return True, "APIHealthy", None
    excerpt = " ".join(resp.text[:256].split())
    return False, "APIUnhealthy", "HTTP %d%s" % (resp.status_code, ": " + excerpt if excerpt else "")


# One instance --------------------------------------------------------------------

class Instance:
    """The files, commands and process of the Keystone of one CR."""

    def __init__(self, namespace, name, port):
        self.namespace, self.name, self.port = namespace, name, port
        self.home = config.KEYSTONES / namespace / name
        self.conf = self.home / "keystone.conf"
        self.db = self.home / "keystone.db"
        self.fernet_keys = self.home / "fernet-keys"
        self.credential_keys = self.home / "credential-keys"
        self.process = process_name(namespace, name)
        self.cache_process = cache_process_name(namespace, name)
        self.cache_port = port + config.KEYSTONE_CR_CACHE_OFFSET
        self.url = url_of(port)

    @property
    def log(self):
        return processes.LOGS / ("%s.log" % self.process)

    # Files -----------------------------------------------------------------------

    def state(self):
        try:
            return json.loads((self.home / "state.json").read_text())
        except (OSError, ValueError):
            return {}

    def save_state(self, **changes):
        state = self.state()
        state.update(changes)
        pki.write_private(self.home / "state.json", (json.dumps(state, sort_keys=True) + "\n").encode())

    def prepare(self, uid, max_active_keys):
        """The directory and keystone.conf; a directory left by an earlier CR of the same name is wiped."""
        if self.home.exists() and self.state().get("uid") != uid:
            shutil.rmtree(self.home)
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        for directory in (self.fernet_keys, self.credential_keys):
            directory.mkdir(mode=0o700, exist_ok=True)
        text = self.conf_text(max_active_keys)
        if not self.conf.exists() or self.conf.read_text() != text:
            self.conf.write_text(text)
        if self.state().get("uid") != uid:
            self.save_state(uid=uid)

    def conf_text(self, max_active_keys, fernet_keys=None, credential_keys=None):
        """keystone.conf; a rotation Job's copy names its own key repository (fernet_keys or credential_keys)."""
        fernet_keys, credential_keys = fernet_keys or self.fernet_keys, credential_keys or self.credential_keys
        return "\n".join([
            "[database]",
            "connection = sqlite:///%s" % self.db,
            "[token]",
            "provider = fernet",
            "expiration = 3600",
            "[fernet_tokens]",
            "key_repository = %s" % fernet_keys,
            "max_active_keys = %d" % max_active_keys,
            "[fernet_receipts]",
            "key_repository = %s" % fernet_keys,
            "[credential]",
            "key_repository = %s" % credential_keys,
        ] + memcached.conf_lines(self.cache_port) + [
            # bcrypt with 4 rounds instead of 12: lab passwords need no resistance to brute force,
            # and every bootstrap and password authentication costs about a second of CPU less.
            "[identity]",
            "password_hash_rounds = 4",
            "",
        ])

    def remove(self):
        shutil.rmtree(self.home, ignore_errors=True)
        parent = self.home.parent
        if parent.exists() and not any(parent.iterdir()):
            parent.rmdir()

    # keystone-manage -------------------------------------------------------------

    def manage(self, *args, env=None):
        """A started `keystone-manage --config-file <conf> <args>`; (process, file with its stderr)."""
        self.start_cache()
        errors = tempfile.TemporaryFile()
        proc = keystone_zygote.start([str(VENV_BIN / "keystone-manage"), "--config-file", str(self.conf)] + list(args),
                                     dict(os.environ, **ENV), env or {}, errors)
        return proc, errors

    def run_manage(self, conf, *args):
        """`keystone-manage --config-file <conf> <args>` to its end: (exit code, the tail of its stderr)."""
        self.start_cache()
        with tempfile.TemporaryFile() as errors:
            proc = keystone_zygote.start([str(VENV_BIN / "keystone-manage"), "--config-file", str(conf)] + list(args),
                                         dict(os.environ, **ENV), {}, errors)
            proc.wait()
            errors.seek(0)
            text = errors.read().decode(errors="replace")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return proc.returncode, (" | ".join(lines[-2:])[-400:] if lines else "no output")

    def bootstrap_args(self, admin_user, region, public_url):
        """keystone-manage bootstrap as upstream's <name>-bootstrap Job runs it (admin/internal: own URL)."""
        return ["bootstrap", "--bootstrap-username", admin_user, "--bootstrap-project-name", "admin",
                "--bootstrap-role-name", "admin", "--bootstrap-service-name", "keystone",
                "--bootstrap-region-id", region, "--bootstrap-admin-url", self.url,
                "--bootstrap-internal-url", self.url, "--bootstrap-public-url", public_url or self.url]

    # The API server ----------------------------------------------------------------

    def running(self):
        return bool(processes.pid_of(self.process))

    def start_cache(self):
        memcached.start(self.cache_process, self.cache_port)

    def start(self, spec=None, fail=False):
        """Start the API server with the uWSGI concurrency of the CR's spec (fail: with an application module
        that does not exist, so it cannot start)."""
        workers, threads = concurrency(spec)
        self.start_cache()
        module = MISSING_API_MODULE if fail else API_MODULE
        extra = {"OS_KEYSTONE_CONFIG_FILES": str(self.conf)}
        processes.LOGS.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            pid = keystone_zygote.start_api(module, self.port, workers, threads, dict(os.environ, **ENV), extra,
                                            log)
        if pid is not None:
            processes.adopt(self.process, pid, sys.executable, keystone_zygote.MARKER)
            return
        processes.start(self.process, [
            VENV_BIN / "uwsgi", "--http-socket", "127.0.0.1:%d" % self.port,
            "--wsgi", module + ":application", "--virtualenv", VENV_BIN.parent,
            "--master", "--processes", str(workers), "--threads", str(threads),
            "--die-on-term", "--need-app", "--lazy-apps", "--disable-logging",
            # uWSGI's http-socket closes every connection after the answer without saying so: a
            # client reusing it gets "connection reset" (and does not retry a POST).
            "--add-header", "Connection: close",
        ], env=dict(ENV, **extra))

    def stop(self):
        processes.stop(self.process)
        processes.stop(self.cache_process)

    def log_tail(self, limit=300):
        """The last non-empty line of the API server's log (why it did not start), shortened."""
        try:
            with open(self.log, "rb") as handle:
                handle.seek(0, os.SEEK_END)
                handle.seek(max(0, handle.tell() - 8192))
                lines = [line.strip() for line in handle.read().decode(errors="replace").splitlines()]
        except OSError:
            return ""
        lines = [line for line in lines if line]
        return lines[-1][:limit] if lines else ""
