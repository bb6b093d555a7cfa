"""The lab region's real Keystone: SQLite, fernet tokens, served by uWSGI.

The admin password is generated once and kept in .lab/keystone/admin-password
(mode 0600); it reaches keystone-manage through the environment, never argv.
"""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import requests
import yaml

from . import config, memcached, pki, processes

HOME = config.STATE / "keystone"
CONF = HOME / "keystone.conf"
PASSWORD = HOME / "admin-password"
CLOUDS = config.STATE / "clouds.yaml"
CLOUD_NAME = "lab-admin"
CACHE = "keystone-cache"
REGION = "lab"
VENV_BIN = Path(sys.executable).parent
URL = "http://127.0.0.1:%d/v3" % config.KEYSTONE_PORT


def _conf_text():
    return "\n".join([
        "[DEFAULT]",
        "log_file = %s" % (processes.LOGS / "keystone-app.log"),
        "[database]",
        "connection = sqlite:///%s" % (HOME / "keystone.db"),
        "[token]",
        "provider = fernet",
        "expiration = 3600",
        "[fernet_tokens]",
        "key_repository = %s" % (HOME / "fernet-keys"),
        "max_active_keys = 3",
        "[fernet_receipts]",
        "key_repository = %s" % (HOME / "fernet-keys"),
        "[credential]",
        "key_repository = %s" % (HOME / "credential-keys"),
        # As the Keystone CRs' (standins/keystones.py): bcrypt with 4 rounds, a password token in
        # about 20 ms instead of 260 (preflight asks for one in every run).
        "[identity]",
        "password_hash_rounds = 4",
    ] + memcached.conf_lines(config.KEYSTONE_CACHE_PORT) + [""])


def _manage(*args, env=None):
    subprocess.run(
        [str(VENV_BIN / "keystone-manage"), "--config-file", str(CONF)] + list(args),
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONWARNINGS="ignore", **(env or {})))


def admin_password():
    if not PASSWORD.exists():
        pki.write_private(PASSWORD, secrets.token_urlsafe(24).encode())
    return PASSWORD.read_text().strip()


def prepare():
    """Database and keys once; bootstrap once per URL (the marker holds the URL it registered)."""
    HOME.mkdir(mode=0o700, parents=True, exist_ok=True)
    processes.LOGS.mkdir(parents=True, exist_ok=True)
    if not CONF.exists() or CONF.read_text() != _conf_text():
        CONF.write_text(_conf_text())
    done = HOME / "prepared"
    if done.exists():
        if done.read_text().strip() == URL:
            return False
        bootstrap()  # the port moved: bootstrap updates the identity endpoints
        done.write_text(URL + "\n")
        return True
    for name in ("fernet-keys", "credential-keys"):
        (HOME / name).mkdir(mode=0o700, exist_ok=True)
    _manage("db_sync")
    os.chmod(HOME / "keystone.db", 0o600)  # it holds the password hashes
    owner = ["--keystone-user", str(os.getuid()), "--keystone-group", str(os.getgid())]
    _manage("fernet_setup", *owner)
    _manage("credential_setup", *owner)
    bootstrap()
    done.write_text(URL + "\n")
    return True


def bootstrap():
    """keystone-manage bootstrap, as the keystone-operator's bootstrap job runs it."""
    _manage("bootstrap", "--bootstrap-username", "admin", "--bootstrap-project-name", "admin",
            "--bootstrap-role-name", "admin", "--bootstrap-service-name", "keystone",
            "--bootstrap-region-id", REGION, "--bootstrap-admin-url", URL,
            "--bootstrap-public-url", URL, "--bootstrap-internal-url", URL,
            env={"OS_BOOTSTRAP_PASSWORD": admin_password()})


def write_clouds_yaml():
    doc = {"clouds": {CLOUD_NAME: {
        "auth": {"auth_url": URL, "username": "admin", "password": admin_password(),
                 "project_name": "admin", "user_domain_name": "Default",
                 "project_domain_name": "Default"},
        "region_name": REGION, "identity_api_version": 3, "interface": "public",
    }}}
    content = yaml.safe_dump(doc, sort_keys=False).encode()
    if not CLOUDS.exists() or CLOUDS.read_bytes() != content:
        pki.write_private(CLOUDS, content)


def start():
    if processes.pid_of("keystone"):
        return
    processes.start("keystone", [
        VENV_BIN / "uwsgi", "--http-socket", "127.0.0.1:%d" % config.KEYSTONE_PORT,
        "--wsgi", "keystone.wsgi.api:application", "--virtualenv", VENV_BIN.parent,
        # Two processes of one thread, as upstream's Keystone runs: Keystone keeps a request's token on its
        # shared middleware, so two threads of one process may mix two requests' tokens.
        "--master", "--processes", "2", "--threads", "1", "--die-on-term",
        "--need-app", "--lazy-apps", "--disable-logging",
        # uWSGI's http-socket closes every connection after the answer without saying so: a client
        # reusing it gets "connection reset" (and does not retry a POST).
        "--add-header", "Connection: close",
    ], env={"OS_KEYSTONE_CONFIG_FILES": str(CONF), "PYTHONWARNINGS": "ignore"})


def ready():
    try:
        return requests.get(URL, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def up():
    memcached.start(CACHE, config.KEYSTONE_CACHE_PORT)  # before keystone-manage, which uses it too
    prepare()
    write_clouds_yaml()
    start()
    processes.wait_until(ready, 120, "keystone", "keystone")
