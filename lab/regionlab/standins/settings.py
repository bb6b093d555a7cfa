"""Delays, injected failures and the lab's machines: YAML files re-read at a pass's start when they changed.

$COBALTCORE_LAB_DIR/standins.yaml (optional):

    delays: {discovery: 0.5, shoot_step: 0.3,            # seconds; discovery: a probe agent's boot to its report
             care: 10.0,                                  # the care controller's period (upstream 1 min)
             keystone: 1.0, control_plane: 1.0, mariadb: 3.0, rabbitmq: 2.0, valkey: 1.5,
             memcached: 1.0, service: 1.0, hypervisor: 0.5, rook: 0.5,
             ceph_status: 2.0}                           # Rook's health checker period (upstream 60 s)
    timing: upstream                                 # optional: UPSTREAM_DELAYS times scale for discovery,
    scale: 0.0167                                    # shoot_step, care (default 1/60); delays given above win
    servers_without_probe: [<server name>, ...]      # its probe never reports: metal-operator sends it back
                                                     # from Discovery to Initial after --discovery-timeout
    shoots:
      <shoot name or namespace/name>:
        fail: "<error of the failing task>"          # Create/Reconcile fails with it
        codes: [ERR_CONFIGURATION_PROBLEM]          # default; retryable codes give state Error
        task: "<task ID>"                            # default: the infrastructure wait
        fail_delete: "<error>"                       # the Delete operation fails with it
        reconcile_every: 5                           # seconds after a success: a periodic Reconcile
                                                     # at the same generation (gardenlet's sync period)
        unschedulable: "<why no seed fits>"          # without spec.seedName: gardener-scheduler's
                                                     # SchedulingFailed event, and no status ever
    keystones:
      <Keystone CR name or namespace/name>:
        fail_start: true                             # its uWSGI starts without a loadable app
        fail_bootstrap: true                         # keystone-manage bootstrap runs without the password
        bootstrap_backoff: 1.0                       # seconds before the 2nd attempt, doubling (default 1)
        fail_upgrade: Migrating                      # that upgrade phase's keystone-manage exits non-zero
        fail_rotation: fernet                        # that kind's rotation pods fail (keystone-manage exits 1)
        reject_rotation: credential                  # its rotation pods stage a duplicate key: RotationRejected
    failures:                                        # the ControlPlane's children (standins/operators.py),
                                                     # Hypervisor/<pool cluster>/<name> (hypervisor_operator.py)
      <Kind, Kind/namespace or Kind/namespace/name>: # e.g. MariaDB/openstack; the most specific wins
        reason: GaleraNotReady                       # the kind's failure condition gets these
        message: "Galera cluster lost quorum"
        terminal: true                               # sticks to the object's generation
      Hypervisor/<pool cluster>/<name>:              # kvm-node-agent's update of spec.version stops:
        update: "systemd-sysupdate failed: ..."      # OperatingSystemUpdate False Stopped (hypervisor_operator.py)
        evict: "No valid host was found."            # its eviction holds an instance in ERROR: never ends
      CephBlockPool/rook-ceph/<name>:                # Rook's kinds (standins/rook.py): phase Failure
        message: "failed to create pool ..."         # and a ReconcileFailed event with the error
      CephCluster/rook-ceph:                         # orchestration fails: Progressing False, state Error
        message: "failed to create cluster: ..."     # (Ceph's health is the real Ceph's: stop a daemon)
      OVNCluster:                                    # or OVNCluster/ovn-system/ovn (standins/ovn.py)
        missing_members: [ovn-sb-2]                  # not Raft members: SouthboundReady and Ready False

lab/machines.yaml: the lab's machines (BMC address and facts) and the rack's login (see that file).
"""

import hashlib
import os
import uuid

import yaml

from .. import config

DEFAULT_DELAYS = {"discovery": 0.5, "shoot_step": 0.3, "care": 10.0,
                  "keystone": 1.0,
                  "control_plane": 1.0, "mariadb": 3.0, "rabbitmq": 2.0, "valkey": 1.5, "memcached": 1.0,
                  "service": 1.0, "hypervisor": 0.5, "rook": 0.5, "ceph_status": 2.0}
# timing: upstream -- seconds as a real region takes them, before the scale: a probe agent PXE-boots and
# reports in about 5 min; a Shoot's reconcile flow takes about 12 min (5 steps) and its care check runs every
# minute (--sync-period of the care controller).
UPSTREAM_DELAYS = {"discovery": 300.0, "shoot_step": 150.0, "care": 60.0}
# A stable namespace for the systems' UUIDs: uuid5(LAB_NAMESPACE, "<bmc>/<index>").
LAB_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "lab.c5c3.io")


class Watched:
    """A YAML file, read again by refresh() when its mtime or size changed; a broken edit keeps the last good value.

    get() returns what the last refresh() read: a stand-in refreshes at the start of a pass, so the whole pass
    sees one version of the file, and a change during the pass ends the wait after it (changed()) instead of
    reaching only the objects the pass had left.
    """

    def __init__(self, path, parse, log):
        self.path = path
        self.parse = parse
        self.log = log
        self.stamp = "unread"
        self.value = parse({})

    def _stamp(self):
        """(mtime, size), None when absent; "writing" for an empty file: yaml.safe_dump never writes nothing,
        so it is a writer's truncation before its content (write_text is not atomic) and counts as no change."""
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return None
        if stat.st_size == 0:
            return "writing"
        return (stat.st_mtime_ns, stat.st_size)

    def changed(self):
        return self._stamp() not in ("writing", self.stamp)

    def refresh(self):
        stamp = self._stamp()
        if stamp not in ("writing", self.stamp):
            try:
                data = yaml.safe_load(open(self.path).read()) if stamp else {}
                self.value = self.parse(data or {})
                self.log("read %s" % self.path if stamp else "%s absent: defaults" % self.path)
            except (OSError, yaml.YAMLError, TypeError, ValueError, AttributeError) as exc:
                self.log("ignoring %s: %s" % (self.path, exc))
            self.stamp = stamp
        return self.value

    def get(self):
        if self.stamp == "unread":
            self.refresh()
        return self.value


class StandinSettings:
    def __init__(self, data):
        delays = dict(DEFAULT_DELAYS)
        if data.get("timing") == "upstream":
            # Upstream's own timings, scaled (default 1/60: an hour is a minute), so waits see real ordering.
            scale = float(data.get("scale", 1.0 / 60))
            delays.update((key, value * scale) for key, value in UPSTREAM_DELAYS.items())
        for key, value in (data.get("delays") or {}).items():
            delays[key] = max(0.0, float(value))
        self.delays = delays
        self.servers_without_probe = set(data.get("servers_without_probe") or [])
        self.shoots = {str(k): dict(v or {}) for k, v in (data.get("shoots") or {}).items()}
        self.keystones = {str(k): dict(v or {}) for k, v in (data.get("keystones") or {}).items()}
        self.failures = {str(k): dict(v or {}) for k, v in (data.get("failures") or {}).items()}

    def delay(self, name):
        return self.delays.get(name, DEFAULT_DELAYS.get(name, 0.5))

    def shoot(self, namespace, name):
        return self.shoots.get("%s/%s" % (namespace, name)) or self.shoots.get(name) or {}

    def keystone(self, namespace, name):
        return self.keystones.get("%s/%s" % (namespace, name)) or self.keystones.get(name) or {}

    def failure(self, kind, namespace, name):
        for key in ("%s/%s/%s" % (kind, namespace, name), "%s/%s" % (kind, namespace), kind):
            if key in self.failures:
                return self.failures[key]
        return {}


def standins(log):
    return Watched(config.STANDINS, StandinSettings, log)


# ---------------------------------------------------------------------------
# The lab's machines

def _digest(text, length):
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def _mac(seed):
    raw = bytes.fromhex(_digest(seed, 10))
    return ":".join("%02x" % b for b in (b"\x02" + raw))  # locally administered


class Machines:
    """lab/machines.yaml: {defaults: {bmc: {...}, system: {...}}, rack: {...}, bmcs: {<name>: {address, bmc, system}}}."""

    def __init__(self, data):
        defaults = data.get("defaults") or {}
        self.bmc_defaults = dict(defaults.get("bmc") or {})
        self.system_defaults = dict(defaults.get("system") or {})
        self.bmcs = {str(k): dict(v or {}) for k, v in (data.get("bmcs") or {}).items()}
        self.rack = dict(data.get("rack") or {})

    def login(self):
        """(username, password) every BMC of the rack accepts; the password None while the lab has set none."""
        try:
            password = config.bmc_password_file(self.rack["credentials"]).read_text().strip()
        except (OSError, KeyError):
            password = None
        return self.rack.get("username"), password

    def address(self, bmc_name):
        """(ip, port) of a BMC."""
        host, port = self.bmcs[bmc_name]["address"].rsplit(":", 1)
        return host, int(port)

    def by_address(self, ip, port):
        """The machine's name at that address, None when no machine answers there."""
        return next((name for name in self.bmcs if self.address(name) == (ip, int(port))), None)

    def manager(self, bmc_name):
        """The BMC's own facts (the Redfish manager)."""
        facts = dict(self.bmc_defaults)
        facts.update(self.bmcs[bmc_name].get("bmc") or {})
        facts.setdefault("serialNumber", "BMC-%s" % _digest(bmc_name, 10).upper())
        return facts

    def system(self, bmc_name):
        """The one system behind a BMC."""
        facts = dict(self.system_defaults)
        facts.update(self.bmcs[bmc_name].get("system") or {})
        seed = "%s/0" % bmc_name
        facts["systemUUID"] = str(facts.get("systemUUID") or uuid.uuid5(LAB_NAMESPACE, seed)).lower()
        facts.setdefault("serialNumber", "LAB-%s" % _digest(seed, 10).upper())
        facts.setdefault("powerState", "Off")
        facts.setdefault("networkInterfaces", [{"name": "eth0", "macAddress": _mac(seed)}])
        return facts


def machines(log):
    return Watched(config.MACHINES, Machines, log)
