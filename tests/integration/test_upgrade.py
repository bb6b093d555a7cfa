"""playbooks/upgrade.yml on the lab region: the hop from seed 003's release (2025.2) to 2026.1.

The region's tests run in file order and this file comes last: a release cannot be undone (upstream refuses a
downgrade), so the hop leaves the region on 2026.1 for the rest of the session; site.yml never sends image tags
(they belong to the release's field manager), so its later runs stay changed=0.
"""

import json
import threading
import time

import pytest

from conftest import REGION_HOST, REGION_NAMESPACE, REPO, _play, get_object, lab_kubectl, standins_restored, \
    update_standins

UPGRADE = REPO / "playbooks" / "upgrade.yml"
TASK = "Move the region's OpenStack cluster to "
OLD = {"keystone": "28.0.0", "glance": "31.0.0", "placement": "14.0.0", "nova": "32.1.0", "neutron": "27.0.1",
       "cinder": "27.0.0"}
NEW = {"keystone": "29.0.0", "glance": "32.0.0", "placement": "15.0.0", "nova": "33.0.0", "neutron": "28.0.0",
       "cinder": "28.0.0"}
KINDS = "keystones,glances,placements,novas,neutrons,cinders"
RELEASE_MANAGER = "c5c3.cobaltcore.release"
FAST = {"cobaltcore_upgrade_step_timeout": 300, "cobaltcore_upgrade_wait_sleep": 1}


def upgrade(release, *args):
    """(rc, JSON output) of upgrade.yml moving the region to `release`."""
    rc, out, unused_seconds = _play(UPGRADE, "-e", json.dumps(dict(FAST, cobaltcore_openstack_release=release)), *args)
    return rc, out


def services():
    """{service: (spec.image.tag, status.installedRelease)} of the region's service CRs."""
    found = get_object(REGION_HOST, "-n", REGION_NAMESPACE, KINDS, missing_ok=False)
    return dict((o["kind"].lower(), (o["spec"]["image"]["tag"], (o.get("status") or {}).get("installedRelease")))
                for o in found["items"])


def release_managers():
    cp = json.loads(lab_kubectl(REGION_HOST, "-n", REGION_NAMESPACE, "get", "controlplane.c5c3.io", "lab", "-o", "json",
                                "--show-managed-fields").stdout)
    return [f["manager"] for f in cp["metadata"].get("managedFields") or [] if f["manager"] == RELEASE_MANAGER]


def the_task(out):
    """The module task's one result (its name carries the release)."""
    for play in out["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"].startswith(TASK):
                (result,) = task["hosts"].values()
                return result
    raise AssertionError("no task %r in the run: %s" % (TASK, out.get("stats")))


class Recorder(threading.Thread):
    """When each service was first seen with its new tag in spec (written) and in status (installed)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.written, self.installed, self.stop = {}, {}, threading.Event()

    def run(self):
        while not self.stop.is_set():
            now = time.monotonic()
            for service, (tag, installed) in services().items():
                if tag == NEW[service]:
                    self.written.setdefault(service, now)
                if installed == NEW[service]:
                    self.installed.setdefault(service, now)
            time.sleep(0.2)


@pytest.fixture(scope="module")
def region_on_old_release(region):
    assert services() == dict((s, (tag, tag)) for s, tag in OLD.items())
    assert release_managers() == []


def test_check_mode_prints_the_whole_plan_and_writes_nothing(region_on_old_release):
    rc, out = upgrade("2026.1", "--check", "--diff")
    assert rc == 0, out
    result = the_task(out)
    assert result["changed"] and result["running"] == dict((s, "2025.2") for s in OLD)
    assert result["plan_lines"] == [
        "step 1 (identity): keystone 28.0.0 -> 29.0.0",
        "step 2 (core): glance 31.0.0 -> 32.0.0, placement 14.0.0 -> 15.0.0",
        "step 3 (compute): cinder 27.0.0 -> 28.0.0, neutron 27.0.1 -> 28.0.0, nova 32.1.0 -> 33.0.0"]
    assert result["diff"]["after"]["images"] == NEW and result["diff"]["before"]["images"] == OLD
    assert services() == dict((s, (tag, tag)) for s, tag in OLD.items()) and release_managers() == []


def test_a_skip_and_an_unknown_release_are_refused_before_any_write(region_on_old_release):
    rc, out = upgrade("2026.2")
    assert rc != 0
    message = the_task(out)["msg"]
    assert message.startswith("invalid input, nothing was changed")
    for service in OLD:
        assert "%s runs 2025.2; 2026.2 skips 2026.1: move one release at a time" % service in message, message
    rc, out = upgrade("2025.3")
    assert rc != 0 and "'2025.3' is no OpenStack release" in the_task(out)["msg"]
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
        assert "step 1 (identity) of the move to 2026.1 failed, later steps were not started: keystone: " \
               "MigrateFailed: Migrating phase failed (28.0.0 -> 29.0.0)" in message, message
        now = services()
        assert now["keystone"] == ("29.0.0", "28.0.0")
        assert all(now[s] == (OLD[s], OLD[s]) for s in OLD if s != "keystone"), now
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
    phases = [step["phase"] for step in result["steps"]]
    assert result["changed"] and phases in (["identity", "core", "compute"], ["core", "compute"]), phases
    assert phases[0] == "core" or not result["steps"][0]["changed"]  # keystone's tag was written by the failed run
    assert services() == dict((s, (tag, tag)) for s, tag in NEW.items())
    written, installed = recorder.written, recorder.installed
    assert installed["keystone"] <= min(written["glance"], written["placement"]), (written, installed)
    assert max(installed["glance"], installed["placement"]) <= min(written[s] for s in ("nova", "neutron", "cinder")), \
        (written, installed)
    assert release_managers() == [RELEASE_MANAGER]


def test_a_finished_move_reruns_without_a_change_and_a_downgrade_is_refused(region_on_old_release):
    rc, out = upgrade("2026.1")
    assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    assert the_task(out)["plan_lines"] == ["every service runs 2026.1: nothing to move"]
    rc, out = upgrade("2025.2")
    assert rc != 0 and "keystone runs 2026.1; a downgrade to 2025.2 is not possible" in the_task(out)["msg"]
