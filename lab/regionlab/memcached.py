"""memcached beside each of the lab's Keystones: the cache upstream Keystones run with.

Seed 003's Keystone CR names `cache: {backend: dogpile.cache.pymemcache, servers: [memcached-N...]}`,
the Memcached of the ControlPlane. The lab has no pods, so each Keystone (the region's and every
Keystone CR's) gets a memcached process of its own on a loopback port, and keystone.conf's [cache]
points there with the same backend. keystone-manage (db_sync, bootstrap) reads the same keystone.conf,
so its writes invalidate what the API process cached, as upstream's Jobs and Deployment share the
region's Memcached. Without a cache every authenticated request costs Keystone about 170 ms of CPU
here (it reads the token's user, project and roles from the database); with it about 5 ms.
"""

import os
import shutil
import threading

from . import processes

# Enough for a lab Keystone's tokens, catalog and assignments; memcached evicts beyond it.
MEMORY_MB = 32


def binary():
    path = shutil.which("memcached") or "/usr/bin/memcached"
    if not os.access(path, os.X_OK):
        raise RuntimeError("memcached is missing: apt-get install memcached (tests/debian-packages.sh does)")
    return path


# The keystone-operator stand-in starts a CR's memcached from its pass and from a Job's thread.
_STARTING = threading.Lock()


def start(name, port):
    """Start the memcached `name` on 127.0.0.1:port unless it runs; return once it accepts connections."""
    with _STARTING:
        _start(name, port)


def _start(name, port):
    if processes.pid_of(name):
        return
    argv = [binary(), "--listen=127.0.0.1", "--port=%d" % port, "--udp-port=0", "--memory-limit=%d" % MEMORY_MB,
            "--threads=1"]
    if os.geteuid() == 0:
        argv.append("--user=root")  # memcached refuses to run as root unless told whom to run as
    processes.start(name, argv)
    processes.wait_until(lambda: processes.port_open(port), 30, name, name)


def conf_lines(port):
    """keystone.conf's [cache] section for the memcached on port."""
    return ["[cache]", "enabled = true", "backend = dogpile.cache.pymemcache",
            "memcache_servers = 127.0.0.1:%d" % port]
