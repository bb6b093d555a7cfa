"""playbooks/upgrade.yml on the lab region: the hop from seed 003's release (2025.2) to 2026.1, of the region's
cluster and lab-tenant-a's together.

The region's tests run in file order and this file comes last: a release cannot be undone (upstream refuses a
downgrade), so the hop leaves the region on 2026.1 for the rest of the session; site.yml never sends image tags
(they belong to the release's field manager), so its later runs stay changed=0.
"""

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import REGION_HOST, REGION_NAMESPACE, REPO, _play, ansible_env, get_object, lab_kubectl, \
    failures, kill_run, standins_restored, task_result, update_standins, wait_truthy
from regionlab import config

UPGRADE = REPO / "playbooks" / "upgrade.yml"
TASK = "Move the region's OpenStack clusters to "
TENANT = "lab-tenant-a"
TENANT_NAMESPACE = "openstack-" + TENANT
OLD = {"keystone": "28.0.0", "glance": "31.0.0", "placement": "14.0.0", "nova": "32.1.0", "neutron": "27.0.1",
       "cinder": "27.0.0"}
NEW = {"keystone": "29.0.0", "glance": "32.0.0", "placement": "15.0.0", "nova": "33.0.0", "neutron": "28.0.0",
       "cinder": "28.0.0"}
LATER = {"keystone": "30.0.0", "glance": "33.0.0", "placement": "16.0.0", "nova": "34.0.0", "neutron": "29.0.0",
         "cinder": "29.0.0"}
KINDS = "keystones,glances,placements,novas,neutrons,cinders"
RELEASE_MANAGER = "c5c3.cobaltcore.release"
FAST = {"cobaltcore_upgrade_step_timeout": 300, "cobaltcore_upgrade_wait_sleep": 1, "cobaltcore_upgrade_tenants": [TENANT]}


def upgrade(release, *args):
    """(rc, JSON output) of upgrade.yml moving the region to `release`."""
    rc, out, unused_seconds = _play(UPGRADE, "-e", json.dumps(dict(FAST, cobaltcore_openstack_release=release)), *args)
    return rc, out


def services(namespace=REGION_NAMESPACE):
    """{service: (spec.image.tag, status.installedRelease)} of a cluster's service CRs."""
    found = get_object(REGION_HOST, "-n", namespace, KINDS, missing_ok=False)
    return dict((o["kind"].lower(), (o["spec"]["image"]["tag"], (o.get("status") or {}).get("installedRelease")))
                for o in found["items"])


def release_managers(namespace=REGION_NAMESPACE, name="lab"):
    cp = json.loads(lab_kubectl(REGION_HOST, "-n", namespace, "get", "controlplane.c5c3.io", name, "-o", "json",
                                "--show-managed-fields").stdout)
    return [f["manager"] for f in cp["metadata"].get("managedFields") or [] if f["manager"] == RELEASE_MANAGER]


def release_written(namespace, name):
    """When the release's field manager last wrote the ControlPlane."""
    cp = json.loads(lab_kubectl(REGION_HOST, "-n", namespace, "get", "controlplane.c5c3.io", name, "-o", "json",
                                "--show-managed-fields").stdout)
    return max(f["time"] for f in cp["metadata"]["managedFields"] if f["manager"] == RELEASE_MANAGER)


def backup_completed(namespace, name):
    """The Backup's condition Complete (mariadb-operator's), which must be True."""
    backup = get_object(REGION_HOST, "-n", namespace, "backups.k8s.mariadb.com", name, missing_ok=False)
    (complete,) = [c for c in backup["status"]["conditions"] if c["type"] == "Complete"]
    assert complete["status"] == "True", complete
    return complete


def the_task(out):
    return task_result(out, TASK)


class Recorder(threading.Thread):
    """When each service was first seen with its new tag in spec (written) and in status (installed)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.written, self.installed, self.stop = {}, {}, threading.Event()

    def run(self):
        while not self.stop.is_set():
            now = time.monotonic()
            for namespace in (REGION_NAMESPACE, TENANT_NAMESPACE):
                for service, (tag, installed) in services(namespace).items():
                    if tag == NEW[service]:
                        self.written.setdefault((namespace, service), now)
                    if installed == NEW[service]:
                        self.installed.setdefault((namespace, service), now)
            time.sleep(0.2)


def on(release, namespace=REGION_NAMESPACE):
    """Every service of the cluster runs that release's tag, as its spec names it."""
    found = services(namespace)
    return bool(found) and found == dict((s, (release[s], release[s])) for s in found)


@pytest.fixture(scope="module")
def region_on_old_release(region):
    assert services() == dict((s, (tag, tag)) for s, tag in OLD.items())
    assert on(OLD, TENANT_NAMESPACE), services(TENANT_NAMESPACE)
    assert release_managers() == [] and release_managers(TENANT_NAMESPACE, TENANT) == []


def test_check_mode_prints_the_whole_plan_and_writes_nothing(region_on_old_release):
    rc, out = upgrade("2026.1", "--check", "--diff")
    assert rc == 0, out
    result = the_task(out)
    region_plan, tenant_plan = result["control_planes"]
    assert result["changed"] and region_plan["running"] == dict((s, "2025.2") for s in OLD)
    assert region_plan["plan_lines"] == [
        "openstack/lab: step 1 (identity): keystone 28.0.0 -> 29.0.0",
        "openstack/lab: step 2 (core): glance 31.0.0 -> 32.0.0, placement 14.0.0 -> 15.0.0",
        "openstack/lab: step 3 (compute): cinder 27.0.0 -> 28.0.0, neutron 27.0.1 -> 28.0.0, nova 32.1.0 -> 33.0.0"]
    assert (tenant_plan["namespace"], tenant_plan["name"]) == (TENANT_NAMESPACE, TENANT)
    assert tenant_plan["plan"][0]["services"] == {"keystone": {"from": "28.0.0", "to": "29.0.0"}}
    assert result["diff"]["after"]["images"]["openstack/lab"] == NEW
    assert result["diff"]["before"]["images"]["openstack/lab"] == OLD
    assert services() == dict((s, (tag, tag)) for s, tag in OLD.items()) and on(OLD, TENANT_NAMESPACE)
    assert release_managers() == [] and release_managers(TENANT_NAMESPACE, TENANT) == []


def test_a_skip_and_an_unknown_release_are_refused_before_any_write(region_on_old_release):
    rc, out = upgrade("2026.2")
    assert rc != 0
    message = the_task(out)["msg"]
    assert message.startswith("invalid input, nothing was changed")
    for service in OLD:
        assert "ControlPlane openstack/lab services.%s.image.tag: %s runs 2025.2; 2026.2 skips 2026.1: move one " \
               "release at a time" % (service, service) in message, message
    assert "ControlPlane %s/%s services.keystone.image.tag: keystone runs 2025.2; 2026.2 skips" % (
        TENANT_NAMESPACE, TENANT) in message
    rc, out = upgrade("2025.3")
    assert rc != 0 and "'2025.3' is no OpenStack release" in the_task(out)["msg"]
    # No backup settings and no explicit opt-out: no step without a backup.
    rc, out = upgrade("2026.1", "-e", json.dumps({"cobaltcore_database_backup": {}}))
    assert rc != 0 and "a release step needs a database backup of each cluster that moves first" in \
        task_result(out, "Require the backup settings")["msg"]
    assert services() == dict((s, (tag, tag)) for s, tag in OLD.items()) and release_managers() == []


def test_a_failed_step_stops_the_move_and_the_next_run_resumes_it_in_order(region_on_old_release):
    with standins_restored():
        # keystone-manage db_sync --migrate exits non-zero: upstream's MigrateFailed, terminal.
        update_standins(lambda data: data.update(keystones={"%s/keystone" % REGION_NAMESPACE: {
            "fail_upgrade": "Migrating"}}))
        time.sleep(1)  # the stand-ins re-read the file when it changes
        rc, out = upgrade("2026.1")
        assert rc != 0
        message = the_task(out)["msg"]
        assert "step 1 (identity) of the move to 2026.1 failed, later steps were not started: openstack/lab " \
               "keystone: MigrateFailed: Migrating phase failed (28.0.0 -> 29.0.0)" in message, message
        assert "%s/%s keystone" % (TENANT_NAMESPACE, TENANT) not in message  # its Keystone moved
        now = services()
        assert now["keystone"] == ("29.0.0", "28.0.0")
        assert all(now[s] == (OLD[s], OLD[s]) for s in OLD if s != "keystone"), now
        # Each moving cluster's database was backed up, and the backup complete, before the first step's write.
        for namespace, name in ((REGION_NAMESPACE, "lab"), (TENANT_NAMESPACE, TENANT)):
            complete = backup_completed(namespace, "mariadb-pre-2026-1")
            assert complete["reason"] == "JobComplete", complete
            assert complete["lastTransitionTime"] <= release_written(namespace, name), (namespace, complete)
        # And the OVN databases, once for the region (Neutron's networks are in the Northbound one).
        ovn = get_object(REGION_HOST, "-n", "ovn-system", "job", "ovn-backup-pre-2026-1", missing_ok=False)
        assert ovn["status"].get("succeeded") == 1 and \
            ovn["status"]["completionTime"] <= release_written(REGION_NAMESPACE, "lab"), ovn["status"]
        # And the Keystones' keys, whose credential keys decrypt the credentials in those databases.
        keys = get_object("management-cluster", "-n", "cobaltcore-backups", "secret",
                          "keys-%s-pre-2026-1" % REGION_HOST, missing_ok=False)
        assert keys["metadata"]["labels"]["c5c3.io/backup-keys"] == "keystone"
        assert "Secret %s/keystone-credential-keys" % TENANT_NAMESPACE in \
            keys["metadata"]["annotations"]["c5c3.io/backup-contents"]
        assert keys["metadata"]["creationTimestamp"] <= release_written(REGION_NAMESPACE, "lab")
    # The cause is gone: the phase's Job runs again, and the next run resumes at the identity step.
    recorder = Recorder()
    recorder.start()
    try:
        rc, out = upgrade("2026.1")
    finally:
        recorder.stop.set()
        recorder.join()
    assert rc == 0, out
    result = the_task(out)
    # Keystone's operator retries its phase once the cause is gone; the run waits for it when it is not done yet.
    phases = [step["phase"] for step in result["steps"] if step["control_plane"] == "openstack/lab"]
    assert result["changed"] and phases in (["identity", "core", "compute"], ["core", "compute"]), phases
    assert phases[0] == "core" or not result["steps"][0]["changed"]  # keystone's tag was written by the failed run
    assert services() == dict((s, (tag, tag)) for s, tag in NEW.items()) and on(NEW, TENANT_NAMESPACE)
    written, installed = recorder.written, recorder.installed
    for namespace in (REGION_NAMESPACE, TENANT_NAMESPACE):
        moved = set(s for n, s in written if n == namespace)
        core = [s for s in ("glance", "placement") if s in moved]
        compute = [s for s in moved if s not in ("keystone", "glance", "placement")]
        later = [written[(namespace, s)] for s in core + compute]
        assert all(installed[(namespace, "keystone")] <= w for w in later), (namespace, written, installed)
        assert all(installed[(namespace, c)] <= written[(namespace, s)] for c in core for s in compute), \
            (namespace, written, installed)
    assert release_managers() == [RELEASE_MANAGER] and release_managers(TENANT_NAMESPACE, TENANT) == [RELEASE_MANAGER]


def test_a_finished_move_reruns_without_a_change_and_a_downgrade_is_refused(region_on_old_release):
    rc, out = upgrade("2026.1")
    assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    assert the_task(out)["plan_lines"] == ["openstack/lab: every service runs 2026.1: nothing to move",
                                           "%s/%s: every service runs 2026.1: nothing to move" % (TENANT_NAMESPACE, TENANT)]
    rc, out = upgrade("2025.2")
    assert rc != 0 and "keystone runs 2026.1; a downgrade to 2025.2 is not possible" in the_task(out)["msg"]


def test_a_move_killed_mid_step_resumes_at_that_step(region_on_old_release):
    """SIGKILL while the core step of the next hop (2026.1 -> 2026.2) waits: nothing later was written, and the
    next run (its run lock's holder is gone) starts at the core step, whose tags are written already."""
    variables = json.dumps(dict(FAST, cobaltcore_openstack_release="2026.2"))
    with standins_restored():
        # The service operators take 10 s per generation: the kill and the next run's start fall inside the core step.
        update_standins(lambda data: data.update(delays=dict(data.get("delays") or {}, service=10.0)))
        time.sleep(1)
        killed = subprocess.Popen(
            [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(REPO / "inventories" / "lab"),
             str(UPGRADE), "-e", variables], cwd=REPO, env=ansible_env(COBALTCORE_LAB_DIR=str(config.STATE)),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_truthy(lambda: services()["glance"][0] == LATER["glance"], "the core step written", timeout=120,
                        interval=0.1)
        finally:
            kill_run(killed)
        now = services()
        assert now["keystone"] == (LATER["keystone"], LATER["keystone"]) and now["glance"][1] == NEW["glance"], now
        assert now["nova"] == (NEW["nova"], NEW["nova"]), now  # the compute step was never written
        rc, out = upgrade("2026.2")
    assert rc == 0, out
    region_steps = [s for s in the_task(out)["steps"] if s["control_plane"] == "openstack/lab"]
    assert [s["phase"] for s in region_steps] == ["core", "compute"] and not region_steps[0]["changed"]
    assert services() == dict((s, (tag, tag)) for s, tag in LATER.items()) and on(LATER, TENANT_NAMESPACE)


def hypervisors(pool):
    """{name: (spec.maintenance, status.operatingSystem.version)} of a pool's Hypervisors."""
    found = get_object(pool, "hypervisors.kvm.cloud.sap", missing_ok=False)["items"]
    return dict((h["metadata"]["name"], ((h.get("spec") or {}).get("maintenance") or "",
                                         ((h.get("status") or {}).get("operatingSystem") or {}).get("version")))
                for h in found)


class MaintenanceRecorder(threading.Thread):
    """The most Hypervisors of a pool seen in maintenance at once, sampled every 0.2 s."""

    def __init__(self, pool):
        super().__init__(daemon=True)
        self.pool, self.most, self.samples, self.stop = pool, 0, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.most = max(self.most, sum(1 for m, unused in hypervisors(self.pool).values() if m))
            self.samples += 1
            time.sleep(0.2)


def test_the_hypervisor_pools_update_one_node_at_a_time_pool_by_pool(region_on_old_release):
    """upgrade.yml with cobaltcore_hypervisor_os_version: the region is on 2026.2 already (nothing moves there); each
    pool's Hypervisors go into maintenance, are evicted, install and boot the version and come back, one at a time."""
    variables = dict(FAST, cobaltcore_openstack_release="2026.2", cobaltcore_hypervisor_os_version="1592.7")
    before = {pool: hypervisors(pool) for pool in ("hv-pool-a", "hv-pool-b")}
    assert all(version == "1592.6" and not m for pool in before.values() for m, version in pool.values()), before
    rc, out, unused = _play(UPGRADE, "-e", json.dumps(variables), "--check")
    planned = task_result(out, "Update the pool's hypervisors to ")
    assert rc == 0 and planned["changed"] and {n["stage"] for n in planned["nodes"]} == {"to update"}
    assert {pool: hypervisors(pool) for pool in before} == before
    # hv-pool-b's Node stops its update (kvm-node-agent's systemd-sysupdate fails): the rollout stops there.
    (node_b,) = before["hv-pool-b"]
    recorder = MaintenanceRecorder("hv-pool-a")
    recorder.start()
    with standins_restored():
        update_standins(lambda data: data.setdefault("failures", {}).update(
            {"Hypervisor/hv-pool-b/%s" % node_b: {"update": "systemd-sysupdate failed: no space left on device"}}))
        time.sleep(1)
        rc, out, unused = _play(UPGRADE, "-e", json.dumps(variables))
    recorder.stop.set()
    recorder.join()
    assert rc != 0
    ((unused_task, host, msg),) = failures(out)
    assert host == "hv-pool-b" and "%s: OperatingSystemUpdate Stopped: systemd-sysupdate failed" % node_b in msg, msg
    assert recorder.samples > 3 and recorder.most == 1, (recorder.samples, recorder.most)
    assert set(hypervisors("hv-pool-a").values()) == {("", "1592.7")}
    assert hypervisors("hv-pool-b")[node_b] == ("manual", "1592.6"), "the failed Node stays out"
    rc, out, unused = _play(UPGRADE, "-e", json.dumps(variables))
    assert rc == 0, out
    assert set(hypervisors("hv-pool-b").values()) == {("", "1592.7")}
    rc, out, unused = _play(UPGRADE, "-e", json.dumps(variables))
    assert rc == 0 and sum(s["changed"] for s in out["stats"].values()) == 0, out["stats"]
