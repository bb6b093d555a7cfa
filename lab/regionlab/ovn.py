"""Real OVN for the lab's control plane and hypervisor Nodes: what the ovn-operator and ovn-agents run.

Debian's OVN 23.03 and Open vSwitch 3.1 run as plain processes:

- central (the control plane's OVNCluster): the Northbound and Southbound databases as 3-member Raft clusters of
  `ovsdb-server` and `ovn-northd`; member i stands for the pod ovn-nb-i / ovn-sb-i and listens on its own
  address, 127.20.0.11+i (the control plane's in-cluster addresses in the lab);
- a load balancer (a TCP relay in the process that asks for it) on the address a LoadBalancer Service of the
  control plane publishes, to the live Southbound members: the only way in from another cluster;
- a chassis per hypervisor Node: its own `ovsdb-server`, `ovs-vswitchd --enable-dummy=override --disable-system`
  and `ovn-controller`, configured through the Open_vSwitch table's external_ids (system-id, ovn-remote,
  ovn-encap-type, ovn-encap-ip, ovn-bridge-mappings, hostname) from what the pool's ovn-agents chart renders.
  A chassis whose ovn-remote does not lead to the Southbound database never registers.

Data lives under .lab/ovn/. The Southbound database's Chassis and Encap tables and each member's
`cluster/status` are what the ovn-operator stand-in (standins/ovn.py) reports.
"""

import json
import shutil
import socket
import threading
from pathlib import Path

from . import config, processes

ROOT = config.STATE / "ovn"
SCHEMAS = {"nb": Path("/usr/share/ovn/ovn-nb.ovsschema"), "sb": Path("/usr/share/ovn/ovn-sb.ovsschema")}
VSWITCH_SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
DATABASES = {"nb": "OVN_Northbound", "sb": "OVN_Southbound"}
CLIENT_PORTS = {"nb": 6641, "sb": 6642}
RAFT_PORTS = {"nb": 6643, "sb": 6644}
SERVICES = {"nb": "ovn-nb", "sb": "ovn-sb"}
MEMBER_ADDRESSES = ["127.20.0.11", "127.20.0.12", "127.20.0.13"]
BINARIES = {"ovsdb-server": "/usr/sbin/ovsdb-server", "ovsdb-tool": "/usr/bin/ovsdb-tool",
            "ovs-vswitchd": "/usr/sbin/ovs-vswitchd", "ovs-vsctl": "/usr/bin/ovs-vsctl",
            "ovs-appctl": "/usr/bin/ovs-appctl", "ovn-northd": "/usr/bin/ovn-northd",
            "ovn-controller": "/usr/bin/ovn-controller", "ovn-sbctl": "/usr/bin/ovn-sbctl",
            "ovn-appctl": "/usr/bin/ovn-appctl"}
PACKAGE_OF = {"ovsdb-server": "openvswitch-switch", "ovs-vswitchd": "openvswitch-switch",
              "ovs-vsctl": "openvswitch-switch", "ovsdb-tool": "openvswitch-common", "ovs-appctl": "openvswitch-common",
              "ovn-northd": "ovn-central", "ovn-controller": "ovn-host", "ovn-sbctl": "ovn-common",
              "ovn-appctl": "ovn-common"}
PACKAGES = dict((BINARIES[name], package) for name, package in PACKAGE_OF.items())
TIMEOUT = 10


def _run(*argv, check=True):
    return processes.run_tool(*argv, timeout=TIMEOUT, check=check)


def member_name(db, index):
    return "%s-%d" % (SERVICES[db], index)


def remotes(db):
    """The database's members as an OVSDB client lists them: tcp:<a>:<port>,..."""
    return ",".join("tcp:%s:%d" % (a, CLIENT_PORTS[db]) for a in MEMBER_ADDRESSES)


class Central:
    """The OVNCluster's databases and northd, under .lab/ovn/central."""

    def __init__(self):
        self.dir = ROOT / "central"

    def process(self, db, index):
        return "ovn-%s" % member_name(db, index)

    def exists(self):
        return all(self.db_file(db, i).exists() for db in DATABASES for i in range(len(MEMBER_ADDRESSES)))

    def create(self):
        """The databases' Raft clusters (member 0 creates, 1 and 2 join)."""
        processes.require(PACKAGES, "OVN")
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        for db, name in DATABASES.items():
            first = "tcp:%s:%d" % (MEMBER_ADDRESSES[0], RAFT_PORTS[db])
            _run(BINARIES["ovsdb-tool"], "create-cluster", self.db_file(db, 0), SCHEMAS[db], first)
            for index in (1, 2):
                _run(BINARIES["ovsdb-tool"], "join-cluster", self.db_file(db, index), name,
                     "tcp:%s:%d" % (MEMBER_ADDRESSES[index], RAFT_PORTS[db]), first)

    def db_file(self, db, index):
        return self.dir / ("%s.db" % member_name(db, index))

    def ctl(self, db, index):
        return self.dir / ("%s.ctl" % member_name(db, index))

    def start(self, skip=()):
        """Every member (but those in skip, names such as ovn-sb-2) and northd, unless they run."""
        if not self.exists():
            self.create()
        for db in DATABASES:
            for index, address in enumerate(MEMBER_ADDRESSES):
                if member_name(db, index) in skip:
                    processes.stop(self.process(db, index))
                    continue
                processes.ensure(self.process(db, index), [
                    BINARIES["ovsdb-server"], "--no-chdir", "--unixctl=%s" % self.ctl(db, index),
                    "--remote=ptcp:%d:%s" % (CLIENT_PORTS[db], address),
                    "--log-file=%s" % (self.dir / ("%s.log" % member_name(db, index))), self.db_file(db, index)])
        processes.ensure("ovn-northd", [BINARIES["ovn-northd"], "--no-chdir",
                                        "--unixctl=%s" % (self.dir / "northd.ctl"),
                                        "--log-file=%s" % (self.dir / "northd.log"),
                                        "--ovnnb-db=%s" % remotes("nb"), "--ovnsb-db=%s" % remotes("sb")],
                         env={"OVN_RUNDIR": str(self.dir)})

    def stop(self):
        processes.stop("ovn-northd")
        for db in DATABASES:
            for index in range(len(MEMBER_ADDRESSES)):
                processes.stop(self.process(db, index))

    def destroy(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def raft(self, db):
        """{member name: {role, leader, status}} of the members that run and answer `cluster/status`."""
        found = {}
        for index in range(len(MEMBER_ADDRESSES)):
            if not processes.pid_of(self.process(db, index)):
                continue
            result = _run(BINARIES["ovs-appctl"], "-t", self.ctl(db, index), "cluster/status", DATABASES[db],
                          check=False)
            if result.returncode != 0:
                continue
            fields = dict(line.split(": ", 1) for line in result.stdout.splitlines() if ": " in line)
            found[member_name(db, index)] = {"role": fields.get("Role"), "leader": fields.get("Leader"),
                                             "status": fields.get("Status")}
        return found

    def members(self, db):
        """The members that are Raft members with a known leader: the ones that serve clients."""
        return sorted(name for name, state in self.raft(db).items()
                      if state["status"] == "cluster member" and state["leader"] not in (None, "unknown"))

    def leader(self, db):
        return next((name for name, state in self.raft(db).items() if state["role"] == "leader"), None)

    def chassis(self):
        """{chassis name: {hostname, encaps: [ip]}} as the Southbound database has them."""
        ips = {row[0][1]: row[1] for row in self.sbctl_list("Encap", "_uuid,ip")}
        found = {}
        for name, hostname, refs in self.sbctl_list("Chassis", "name,hostname,encaps"):
            uuids = [refs[1]] if refs[0] == "uuid" else [r[1] for r in refs[1]]
            found[name] = {"hostname": hostname, "encaps": sorted(ips[u] for u in uuids if u in ips)}
        return found

    def delete_chassis(self, name):
        """Remove a chassis (and its encapsulations) from the Southbound database."""
        self.sbctl("--if-exists", "chassis-del", name)

    def sbctl(self, *args):
        """ovn-sbctl against the Southbound members."""
        return _run(BINARIES["ovn-sbctl"], "--db=%s" % remotes("sb"), "--timeout=%d" % TIMEOUT, *args)

    def sbctl_list(self, table, columns):
        """The rows of a Southbound table, those columns only."""
        return json.loads(self.sbctl("--format=json", "--columns=%s" % columns, "list", table).stdout)["data"]


class Chassis:
    """One hypervisor Node's Open vSwitch and ovn-controller, under .lab/ovn/chassis/<pool>.<node>."""

    def __init__(self, pool, node):
        self.name = "%s.%s" % (pool, node)
        self.dir = ROOT / "chassis" / self.name
        self.socket = self.dir / "db.sock"

    def process(self, what):
        return "ovn-chassis-%s-%s" % (self.name, what)

    def start(self):
        processes.require(PACKAGES, "OVN")
        db = self.dir / "conf.db"
        if not db.exists():
            self.dir.mkdir(parents=True, exist_ok=True)
            _run(BINARIES["ovsdb-tool"], "create", db, VSWITCH_SCHEMA)
        processes.ensure(self.process("ovsdb"), [
            BINARIES["ovsdb-server"], "--no-chdir", "--unixctl=%s" % (self.dir / "ovsdb.ctl"),
            "--remote=punix:%s" % self.socket, "--log-file=%s" % (self.dir / "ovsdb.log"), db], env=self.env())
        processes.wait_until(self.socket.exists, TIMEOUT, "chassis %s database" % self.name, self.process("ovsdb"))
        self.vsctl("--no-wait", "init")
        processes.ensure(self.process("vswitchd"), [
            BINARIES["ovs-vswitchd"], "--no-chdir", "--unixctl=%s" % (self.dir / "vswitchd.ctl"),
            "--log-file=%s" % (self.dir / "vswitchd.log"), "--enable-dummy=override", "--disable-system",
            "unix:%s" % self.socket], env=self.env())
        processes.ensure(self.process("controller"), [
            BINARIES["ovn-controller"], "--no-chdir", "--log-file=%s" % (self.dir / "ovn-controller.log"),
            "unix:%s" % self.socket], env=self.env())

    def env(self):
        """Where the daemons put their control sockets (bridges' management sockets too): the chassis' folder."""
        return {"OVN_RUNDIR": str(self.dir), "OVS_RUNDIR": str(self.dir)}

    def connected(self):
        """Whether ovn-controller is connected to the Southbound database (`connection-status`, what the agents'
        readiness probe asks)."""
        pid = processes.pid_of(self.process("controller"))
        if pid is None:
            return False
        result = _run(BINARIES["ovn-appctl"], "-t", self.dir / ("ovn-controller.%d.ctl" % pid), "connection-status",
                      check=False)
        return result.returncode == 0 and result.stdout.strip() == "connected"

    def vsctl(self, *args):
        return _run(BINARIES["ovs-vsctl"], "--db=unix:%s" % self.socket, "--timeout=%d" % TIMEOUT, *args)

    def external_ids(self):
        result = self.vsctl("--format=json", "--columns=external_ids", "list", "Open_vSwitch", ".")
        row = json.loads(result.stdout)["data"][0][0]
        return dict(row[1])

    def configure(self, wanted):
        """Set the Open_vSwitch external_ids that differ from wanted ({key: value}; None removes a key)."""
        have = self.external_ids()
        changes = [("%s" % k, v) for k, v in sorted(wanted.items()) if have.get(k) != v]
        if not changes:
            return False
        args = []
        for key, value in changes:
            if value is None:
                args += ["--", "remove", "Open_vSwitch", ".", "external_ids", key]
            else:
                args += ["--", "set", "Open_vSwitch", ".", 'external_ids:%s="%s"' % (key, value)]
        self.vsctl("--no-wait", *args[1:])
        return True

    def stop(self):
        for what in ("controller", "vswitchd", "ovsdb"):
            processes.stop(self.process(what))

    def destroy(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Relay:
    """A load balancer's address: connections to (address, port) go to the first backend that accepts, both ways
    until either side closes. Runs as threads of the process that holds it."""

    def __init__(self, address, port, backends):
        self.address, self.port, self.backends = address, port, list(backends)
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind((address, port))
        self.server.listen(64)
        self.closed = False
        threading.Thread(target=self._accept, name="relay-%s:%d" % (address, port), daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                client, dummy = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        for address, port in self.backends:
            try:
                upstream = socket.create_connection((address, port), timeout=2)
            except OSError:
                continue
            upstream.settimeout(None)
            threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
            _pipe(client, upstream)
            return
        client.close()

    def close(self):
        self.closed = True
        # The accept thread holds the listening socket while it waits: close() alone would leave the address bound.
        try:
            self.server.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.server.close()


def _pipe(source, target):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, target):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
