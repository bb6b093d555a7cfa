"""Real Ceph behind each storage pool: the daemons Rook runs (mons, a mgr, OSDs, MDSs, RADOS gateways), as lab
processes.

Debian's ceph-mon, ceph-mgr, ceph-osd, ceph-mds and radosgw (16.2) run as plain processes, each bound to the address of
the storage pool's Node it stands for (the pool's public network, 127.30.x.0/24 in the lab), so the
control plane and the tenants' clients reach the monitors only at what the pool publishes. The Rook
stand-in (standins/rook.py) bootstraps a cluster when it orchestrates a CephCluster, with the fsid and
the mon and admin keys it wrote into Rook's Secret rook-ceph-mon, and runs Rook's Ceph commands
against it (pools, cephx clients, filesystems and their MDS daemons, object stores and their gateways, status)
through librados and radosgw-admin.

Data lives under .lab/ceph/<storage pool>/. The OSDs use memstore (no block devices here), which
keeps its objects across a restart only when it shuts down cleanly (osd_fast_shutdown false).

Lab settings beside Ceph's defaults, each for a reason of this machine rather than of the region:
- paxos_propose_interval 0.05 s: the mons commit a map change every 50 ms instead of every second
  (on loopback there is no network to batch for); Rook's pool and client commands each wait for one.
- osd_pool_default_pg_num 1 and the autoscaler off: fifty tenants' pools on three memstore OSDs
  stay below mon_max_pg_per_osd; with the autoscaler on, quotas are not enforced on time.
- osd_crush_chooseleaf_type 0: one Node per lab pool, so the default rule (Ceph's own .mgr pool)
  spreads replicas over OSDs; the tenants' pools use the failure domain of their CephBlockPool.
- mon_data_avail_warn 5: the machine's disk, not the region's, is the mons' disk.
"""

import errno
import importlib.machinery
import importlib.util
import json
import shutil
import sysconfig
import threading
import time
import uuid
from pathlib import Path

from . import config, processes

ROOT = config.STATE / "ceph"
BINARIES = {"mon": "/usr/bin/ceph-mon", "mgr": "/usr/bin/ceph-mgr", "osd": "/usr/bin/ceph-osd",
            "mds": "/usr/bin/ceph-mds", "rgw": "/usr/bin/radosgw"}
TOOLS = {"authtool": "/usr/bin/ceph-authtool", "monmaptool": "/usr/bin/monmaptool", "rbd": "/usr/bin/rbd",
         "rgw-admin": "/usr/bin/radosgw-admin"}
RADOS_DIR = Path("/usr/lib/python3/dist-packages")
MON_PORT, MSGR2_PORT = 6789, 3300
# The gateways' HTTP ports on their Node's address (Rook's pods each listen on 8080 behind a Service; the lab's share
# the Node address).
RGW_PORTS = range(7480, 7580)
ADMIN = "client.admin"
SETTINGS = {
    "auth_cluster_required": "cephx", "auth_service_required": "cephx", "auth_client_required": "cephx",
    "auth_allow_insecure_global_id_reclaim": "false",
    "ms_bind_ipv6": "false",
    "osd_objectstore": "memstore", "memstore_device_bytes": str(1 << 30), "osd_fast_shutdown": "false",
    "osd_pool_default_pg_autoscale_mode": "off", "osd_pool_default_pg_num": "1", "osd_pool_default_pgp_num": "1",
    "osd_crush_chooseleaf_type": "0",
    "mon_allow_pool_delete": "true",
    "mon_data_avail_warn": "5",
    "paxos_propose_interval": "0.05", "paxos_min_wait": "0.01",
    "osd_class_update_on_start": "false",
    "mgr_initial_modules": "",
}
BOOTSTRAP_TIMEOUT = 90


class CephError(RuntimeError):
    """A Ceph command that failed: errno (negative, as librados returns it) and Ceph's message."""

    def __init__(self, command, code, message):
        super().__init__("ceph %s: %s (%d)" % (command, message, code))
        self.code, self.message = code, message


RADOS = RADOS_DIR / ("rados" + sysconfig.get_config_var("EXT_SUFFIX"))
PACKAGES = dict([(binary, "radosgw" if kind == "rgw" else "ceph-" + kind) for kind, binary in BINARIES.items()]
                + [(tool, "ceph-common") for tool in TOOLS.values()] + [(RADOS, "python3-rados")])


_RADOS = []
_RADOS_LOADING = threading.Lock()


def rados():
    """Debian's librados binding (python3-rados), loaded by its file so that nothing else of dist-packages enters
    this interpreter; it is built for the system's Python 3.11, the lab's interpreter too. Loaded once, under a lock:
    two pools' bootstraps start at once, and a half-initialised module fails (NameError in Rados.__setup)."""
    with _RADOS_LOADING:
        return _load_rados()


def _load_rados():
    if not _RADOS:
        processes.require({RADOS: "python3-rados"}, "librados for this Python")
        loader = importlib.machinery.ExtensionFileLoader("rados", str(RADOS))
        spec = importlib.util.spec_from_file_location("rados", str(RADOS), loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        _RADOS.append(module)
    return _RADOS[0]


def address_vector(address):
    """A mon's msgr2 and msgr1 addresses, as mon_host and monmaptool take them."""
    return "[v2:%s:%d,v1:%s:%d]" % (address, MSGR2_PORT, address, MON_PORT)


def connect(monitors, name, key, timeout=10):
    """A librados client for `name` (client.<x>) with its key, reaching the cluster at monitors ["ip:port", ...]
    only: what a tenant's Cinder gets. The caller shuts it down."""
    module = rados()
    client = module.Rados(name=name, conf={"mon_host": ",".join(monitors), "key": key,
                                           "auth_client_required": "cephx", "ms_bind_ipv6": "false",
                                           "client_mount_timeout": str(timeout), "rados_mon_op_timeout": str(timeout),
                                           "rados_osd_op_timeout": str(timeout)})
    client.connect(timeout=timeout)
    return client


def command(client, prefix, **args):
    """A mon command as `ceph <prefix> --format json` runs it: its parsed output, or CephError."""
    return _reply(prefix, client.mon_command(_request(prefix, args), b""))


def _request(prefix, args):
    return json.dumps(dict(args, prefix=prefix, format="json"))


def _reply(prefix, reply):
    """A mon or mgr command's (code, output, status): the output parsed, or CephError."""
    code, out, status = reply
    if code < 0:
        raise CephError(prefix, code, status or "error")
    return json.loads(out) if out.strip() else {}


def _entity(kind, daemon_id):
    """A daemon's cephx name: <kind>.<id>, a gateway's client.rgw.<id>."""
    return "client.rgw.%s" % daemon_id if kind == "rgw" else "%s.%s" % (kind, daemon_id)


# The daemons Rook adds with a filesystem or an object store: where the state records them, their caps (Rook's
# mds/config.go, object/config.go) and the options they get in the mons' configuration.
DAEMON_STATE = {"mds": "mdss", "rgw": "rgws"}
MDS_CAPS = ["osd", "allow *", "mds", "allow", "mon", "allow profile mds"]
RGW_CAPS = ["mon", "allow rw", "osd", "allow rwx"]
MDS_OPTIONS = ("mds_join_fs",)
RGW_OPTIONS = ("rgw_realm", "rgw_zonegroup", "rgw_zone", "rgw_frontends")


class Cluster:
    """One storage pool's Ceph, under .lab/ceph/<pool>."""

    def __init__(self, pool):
        self.pool = pool
        self.dir = ROOT / pool
        self.conf = self.dir / "ceph.conf"
        self.state_file = self.dir / "cluster.json"
        self._client = None
        self._lock = threading.Lock()

    # What exists ---------------------------------------------------------------

    def state(self):
        """{fsid, mons: [[id, address]], mgrs: [[id, address]], osds: [{id, uuid, host, address}], mdss: [[id,
        address]], rgws: [[id, address, port]], device_class, complete}, or None before the bootstrap began;
        `complete` once every OSD was up."""
        try:
            return json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return None

    def complete(self, fsid=None):
        """Whether a bootstrap (of this fsid) finished; a half-made cluster is made again."""
        state = self.state() or {}
        return bool(state.get("complete")) and (fsid is None or state.get("fsid") == fsid)

    def process(self, kind, daemon_id):
        return "ceph-%s-%s-%s" % (self.pool, kind, daemon_id)

    def daemons(self):
        """[(kind, id, address, Node)]: mons, mgrs, MDSs and gateways carry no Node name (their address places
        them)."""
        state = self.state() or {}
        return ([("mon", m, a, None) for m, a in state.get("mons") or []]
                + [("mgr", m, a, None) for m, a in state.get("mgrs") or []]
                + [("osd", str(o["id"]), o["address"], o["host"]) for o in state.get("osds") or []]
                + [("mds", m, a, None) for m, a in state.get("mdss") or []]
                + [("rgw", r, a, None) for r, a, dummy in state.get("rgws") or []])

    # Bootstrap -----------------------------------------------------------------

    def bootstrap(self, fsid, mon_key, admin_key, mons, hosts, osds_per_host, device_class=None):
        """Make and start the cluster unless it exists with this fsid: mons [(id, address)], hosts [(Node name,
        address)], osds_per_host OSDs on each; returns once every OSD is up. A cluster of another fsid (its
        CephCluster was deleted and created again) is removed first, as Rook's hosts are cleaned."""
        processes.require(PACKAGES, "Ceph")
        if self.complete(fsid):
            self.start()
            return self.state()
        self.destroy()
        (self.dir / "run").mkdir(parents=True)
        (self.dir / "log").mkdir()
        self._write_conf(fsid, mons, hosts[0][1])
        mon_keyring = self.dir / "mon.a.keyring"
        processes.run_tool(TOOLS["authtool"], "--create-keyring", mon_keyring, "--add-key", mon_key, "-n", "mon.",
                           "--cap", "mon", "allow *")
        processes.run_tool(TOOLS["authtool"], "--create-keyring", self.dir / ("%s.keyring" % ADMIN), "--add-key",
                           admin_key, "-n", ADMIN, "--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mds",
                           "allow *", "--cap", "mgr", "allow *")
        processes.run_tool(TOOLS["authtool"], mon_keyring, "--import-keyring", self.dir / ("%s.keyring" % ADMIN))
        monmap = self.dir / "monmap"
        args = [TOOLS["monmaptool"], "--create", "--fsid", fsid]
        for mon, address in mons:
            args += ["--addv", mon, address_vector(address)]
        processes.run_tool(*(args + [monmap]))
        for mon, dummy in mons:
            (self.dir / ("mon-%s" % mon)).mkdir()
            processes.run_tool(BINARIES["mon"], "-c", self.conf, "--mkfs", "-i", mon, "--monmap", monmap, "--keyring",
                               mon_keyring)
        state = {"fsid": fsid, "mons": [list(m) for m in mons], "mgrs": [["a", hosts[0][1]]], "osds": [],
                 "device_class": device_class}
        self._save(state)
        for mon, address in mons:
            self._start("mon", mon, address)
        admin = self.admin()
        self._make_key("mgr.a", ["mon", "allow profile mgr", "osd", "allow *", "mds", "allow *"])
        self._start("mgr", "a", hosts[0][1])
        for host, address in hosts:
            for dummy in range(osds_per_host):
                state["osds"].append(self._make_osd(admin, host, address, device_class))
                self._save(state)
        self.wait(lambda s: s["osdmap"]["num_up_osds"] == len(state["osds"]), "%d OSDs up" % len(state["osds"]))
        self.wait_for_volumes_module()
        state["complete"] = True
        self._save(state)
        return state

    def hosts(self):
        """The Nodes the cluster has OSD daemons on."""
        return sorted({osd["host"] for osd in (self.state() or {}).get("osds") or []})

    def add_host(self, host, address, osds_per_host, device_class=None):
        """OSDs on a Node that joined after the bootstrap (Rook's OSD prepare on a new valid Node), started; returns
        their ids once they are up."""
        admin = self.admin()
        made = []
        for dummy in range(osds_per_host):
            osd = self._make_osd(admin, host, address, device_class)
            state = self.state()
            state["osds"].append(osd)
            self._save(state)
            made.append(osd["id"])
        self.wait(lambda dump: set(made) <= {o["osd"] for o in dump["osds"] if o["up"]}, "the OSDs of %s up" % host,
                  read=lambda: self.command("osd dump"))
        return made

    def remove_host(self, host):
        """A Node's OSD daemons stopped and forgotten: its server was released and wiped. What Ceph still records of
        them (an OSD not purged first) stays, down, as in a region."""
        for osd in [o for o in self.state()["osds"] if o["host"] == host]:
            processes.stop(self.process("osd", str(osd["id"])))
            shutil.rmtree(self.dir / ("osd-%d" % osd["id"]), ignore_errors=True)
            (self.dir / ("osd.%d.keyring" % osd["id"])).unlink(missing_ok=True)
        state = self.state()
        state["osds"] = [o for o in state["osds"] if o["host"] != host]
        self._save(state)

    def wait_for_volumes_module(self, timeout=BOOTSTRAP_TIMEOUT):
        """Until the new mgr has loaded its always-on volumes module. In a region Rook's mgr runs for minutes
        while the OSDs are prepared; the lab's OSDs are up seconds after it, and a filesystem's `fs subvolumegroup
        create` would otherwise meet "Module 'volumes' is not enabled/loaded"."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.mgr_command("fs volume ls", timeout=5)
            except (CephError, rados().Error):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

    def mds_ids(self):
        return [m for m, dummy in (self.state() or {}).get("mdss") or []]

    def add_mds(self, daemon_id, address, filesystem):
        """An MDS daemon for a filesystem (mds_join_fs ties it to its filesystem, as Rook sets it), started; a known
        one is only started."""
        if daemon_id not in self.mds_ids():
            self._make_daemon("mds", [daemon_id, address], MDS_CAPS, [("mds_join_fs", filesystem)])
        self._start("mds", daemon_id, address)

    def remove_mds(self, daemon_id):
        """Rook's DeleteMdsCephObjects with the daemon's Deployment."""
        self._remove_daemon("mds", daemon_id, MDS_OPTIONS)

    def rgws(self):
        """{gateway id: (address, port)}."""
        return dict((r, (a, p)) for r, a, p in (self.state() or {}).get("rgws") or [])

    def add_rgw(self, daemon_id, address, realm, zonegroup, zone):
        """A RADOS gateway client.rgw.<daemon_id> in its realm, zone group and zone, its beast frontend on a free port
        of the Node address; started. Returns its (address, port)."""
        known = self.rgws()
        if daemon_id not in known:
            used = {port for have, port in known.values() if have == address}
            port = next(p for p in RGW_PORTS if p not in used and not processes.port_open(p, address))
            options = zip(RGW_OPTIONS, (realm, zonegroup, zone, "beast endpoint=%s:%d" % (address, port)))
            self._make_daemon("rgw", [daemon_id, address, port], RGW_CAPS, options)
            known[daemon_id] = (address, port)
        self._start("rgw", daemon_id, address)
        return known[daemon_id]

    def remove_rgw(self, daemon_id):
        """A gateway's Deployment gone with the object store."""
        self._remove_daemon("rgw", daemon_id, RGW_OPTIONS)

    def _make_key(self, entity, caps):
        """A daemon's cephx key with its caps (get-or-create), its keyring file and its data directory (<type>-<id>,
        as the configuration names it)."""
        key = self.command("auth get-or-create", entity=entity, caps=caps)[0]["key"]
        (self.dir / _data_dir(entity)).mkdir(exist_ok=True)
        (self.dir / ("%s.keyring" % entity)).write_text(_keyring(entity, key))

    def _make_daemon(self, kind, record, caps, options):
        """A daemon Rook adds with a filesystem or an object store (record [id, address, ...]): its key, its options
        in the mons' configuration, its record in the state."""
        entity = _entity(kind, record[0])
        self._make_key(entity, caps)
        for name, value in options:
            self.command("config set", who=entity, name=name, value=value)
        state = self.state()
        state.setdefault(DAEMON_STATE[kind], []).append(record)
        self._save(state)

    def _remove_daemon(self, kind, daemon_id, options):
        """A daemon stopped; its key, keyring, options and data directory gone; its record out of the state."""
        processes.stop(self.process(kind, daemon_id))
        entity = _entity(kind, daemon_id)
        for prefix, args in [("auth del", {"entity": entity})] + [("config rm", {"who": entity, "name": o})
                                                                   for o in options]:
            try:
                self.command(prefix, **args)
            except CephError as exc:
                if exc.code != -errno.ENOENT:
                    raise
        (self.dir / ("%s.keyring" % entity)).unlink(missing_ok=True)
        shutil.rmtree(self.dir / _data_dir(entity), ignore_errors=True)
        state = self.state()
        state[DAEMON_STATE[kind]] = [r for r in state.get(DAEMON_STATE[kind]) or [] if r[0] != daemon_id]
        self._save(state)

    def rgw_admin(self, *args):
        """radosgw-admin as the admin: its parsed output (None when it prints nothing), or CephError with the
        tool's errno."""
        result = processes.run_tool(TOOLS["rgw-admin"], "-c", self.conf, "-n", ADMIN, "--format", "json", *args,
                                    check=False)
        if result.returncode != 0:
            said = [line for line in (result.stderr or result.stdout).splitlines() if "AdminSocket" not in line]
            raise CephError("radosgw-admin %s" % " ".join(a for a in args[:2]), -result.returncode,
                            " ".join(said).strip()[-300:])
        return json.loads(result.stdout) if result.stdout.strip() else None

    def _make_osd(self, admin, host, address, device_class):
        osd_uuid = str(uuid.uuid4())
        osd_id = command(admin, "osd new", uuid=osd_uuid)["osdid"]
        self._make_key("osd.%d" % osd_id, ["osd", "allow *", "mon", "allow profile osd", "mgr", "allow profile osd"])
        processes.run_tool(BINARIES["osd"], "-c", self.conf, "-i", osd_id, "--mkfs", "--osd-uuid", osd_uuid)
        command(admin, "osd crush add", id=osd_id, weight=0.001, args=["root=default", "host=%s" % host])
        if device_class:
            command(admin, "osd crush set-device-class", **{"class": device_class, "ids": [str(osd_id)]})
        self._start("osd", str(osd_id), address, host)
        return {"id": osd_id, "uuid": osd_uuid, "host": host, "address": address}

    def _write_conf(self, fsid, mons, address):
        d = self.dir
        lines = ["[global]", "fsid = %s" % fsid, "mon_host = %s" % ",".join(address_vector(a) for dummy, a in mons),
                 "public_addr = %s" % address,
                 "run_dir = %s" % (d / "run"), "admin_socket = %s" % (d / "run" / "$name.asok"),
                 "log_file = %s" % (d / "log" / "$name.log"), "keyring = %s" % (d / "$name.keyring"),
                 "mon_data = %s" % (d / "mon-$id"), "osd_data = %s" % (d / "osd-$id"),
                 "mgr_data = %s" % (d / "mgr-$id"), "mds_data = %s" % (d / "mds-$id"),
                 "rgw_data = %s" % (d / "rgw-$id")]
        lines += ["%s = %s" % item for item in sorted(SETTINGS.items())]
        self.conf.write_text("\n".join(lines) + "\n")

    def _save(self, state):
        self.state_file.write_text(json.dumps(state, indent=1) + "\n")

    # Processes -----------------------------------------------------------------

    def _start(self, kind, daemon_id, address, host=None):
        name = ["-n", "client.rgw.%s" % daemon_id] if kind == "rgw" else ["-i", daemon_id]
        argv = [BINARIES[kind], "-f", "-c", self.conf] + name + ["--public-addr", address]
        if host:  # where the OSD puts itself in the CRUSH map at start: its Node, as Rook's OSD pods do
            argv += ["--crush-location", "root=default host=%s" % host]
        processes.ensure(self.process(kind, daemon_id), argv)

    def start(self, only=None):
        """Start every daemon that does not run (or only the named process)."""
        for kind, daemon_id, address, host in self.daemons():
            if only in (None, self.process(kind, daemon_id)):
                self._start(kind, daemon_id, address, host)

    def stop(self, only=None):
        for kind, daemon_id, dummy, dummy in reversed(self.daemons()):
            if only in (None, self.process(kind, daemon_id)):
                processes.stop(self.process(kind, daemon_id))
        if only is None:
            self.close()

    def destroy(self):
        """Stop the daemons and remove the data (a deleted CephCluster's hosts, cleaned)."""
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    # Commands ------------------------------------------------------------------

    def admin(self):
        """The admin's librados client (one per Cluster, shared by threads)."""
        with self._lock:
            if self._client is None:
                module = rados()
                client = module.Rados(conffile=str(self.conf), name=ADMIN,
                                      conf={"rados_mon_op_timeout": "15", "rados_osd_op_timeout": "15"})
                client.connect(timeout=15)
                self._client = client
            return self._client

    def close(self):
        with self._lock:
            if self._client is not None:
                self._client.shutdown()
                self._client = None

    def command(self, prefix, **args):
        return command(self.admin(), prefix, **args)

    def status(self):
        return self.command("status")

    def mgr_command(self, prefix, timeout=0, **args):
        """A command of a mgr module (`ceph fs subvolumegroup ...` is the volumes module's): its parsed output."""
        return _reply(prefix, self.admin().mgr_command(_request(prefix, args), b"", timeout=timeout))

    def node_addresses(self):
        """The addresses of the pool's Nodes (where its OSDs run), in order."""
        return sorted({osd["address"] for osd in self.state()["osds"]})

    def rbd(self, *args):
        """The rbd tool as the admin (what Rook's `rbd` calls run); its output."""
        return processes.run_tool(TOOLS["rbd"], "-c", self.conf, "-n", ADMIN, *args).stdout

    def rbd_json(self, *args):
        """A listing of the rbd tool, parsed (None when it prints nothing)."""
        out = self.rbd(*(args + ("--format", "json")))
        return json.loads(out) if out.strip() else None

    def rbd_usage(self, pool):
        """(images, snapshots) of a pool (`rbd pool stats`, Rook's GetPoolStatistics: images.count, images.snap_count)."""
        images = (self.rbd_json("pool", "stats", pool) or {}).get("images") or {}
        return images.get("count", 0), images.get("snap_count", 0)

    def remove_images(self, pool):
        """What Rook's clean-up Job for a force-deleted pool does: every image's snapshots, then the image."""
        images = self.rbd_json("ls", pool) or []
        for image in images:
            self.rbd("snap", "purge", "%s/%s" % (pool, image))
            self.rbd("rm", "--no-progress", "%s/%s" % (pool, image))
        return len(images)

    def wait(self, predicate, what, timeout=BOOTSTRAP_TIMEOUT, read=None):
        """Until predicate(read()) (read: `ceph status` unless given); its last answer."""
        deadline = time.monotonic() + timeout
        while True:
            status = (read or self.status)()
            if predicate(status):
                return status
            if time.monotonic() > deadline:
                raise RuntimeError("Ceph %s: not %s after %ds" % (self.pool, what, timeout))
            time.sleep(0.5)


def _data_dir(entity):
    """A daemon's data directory as ceph.conf's `<type>_data = <dir>/<type>-$id` names it: mon.a -> mon-a,
    client.rgw.x -> rgw-rgw.x."""
    kind, daemon_id = entity.split(".", 1)
    return "%s-%s" % (kind if kind != "client" else daemon_id.split(".", 1)[0], daemon_id)


def _keyring(entity, key):
    return "[%s]\n\tkey = %s\n" % (entity, key)

