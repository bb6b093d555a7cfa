"""The region's ControlPlane health by dependency phase, as an operator sees it: phase 4's wait and
playbooks/health.yml on the converged region, and phase 4 against an injected MariaDB failure.

The failure is injected for the region's own MariaDB through standins.yaml (mariadb-operator's
upstream reason and message for a Galera cluster that is not ready), and taken out again; the
test waits until the MariaDB is Ready again, so the region stays as the session built it.
"""

import json
import time

from conftest import (REGION_NAMESPACE, REPO, failures, lab_kubectl, run_playbook, standins_restored, task_results,
                      update_standins, wait_truthy)
from regionlab import config

HEALTH = REPO / "playbooks" / "health.yml"
PHASE4 = REPO / "playbooks" / "control_plane.yml"
FAILURE = {"reason": "GaleraNotReady", "message": "Galera not ready: 1 of 3 members synced (injected)"}
PHASES = ["infrastructure", "identity", "service-catalog", "core", "compute", "scheduler", "testing"]


def _mariadb_condition():
    proc = lab_kubectl("lab-control-plane", "-n", REGION_NAMESPACE, "get", "mariadbs.k8s.mariadb.com", "mariadb",
                       "-o", "json", check=False)
    if proc.returncode:
        return None
    return next((c for c in json.loads(proc.stdout).get("status", {}).get("conditions", []) if c["type"] == "Ready"),
                None)


def test_health_playbook_reports_every_phase_of_the_region(region):
    rc, out = run_playbook(HEALTH, COBALTCORE_LAB_DIR=str(config.STATE), ANSIBLE_SHOW_CUSTOM_STATS="1")
    assert rc == 0, failures(out)
    result = task_results(out, "Judge every ControlPlane of the cluster")["lab-control-plane"]
    assert result["changed"] is False
    report = next(r for r in result["control_planes"] if r["namespace"] == REGION_NAMESPACE)
    assert [p["name"] for p in report["phases"]] == PHASES
    states = {p["name"]: p["state"] for p in report["phases"]}
    assert states["infrastructure"] == "ready" and states["identity"] == "ready", report["table"]
    assert states["scheduler"] == "not-enabled" and states["testing"] == "not-enabled"
    assert report["table"][0].startswith("ControlPlane %s/" % REGION_NAMESPACE)
    assert report["table"][1].split()[:3] == ["1", "infrastructure", "ready"] and "mariadb" in report["table"][1]
    stats = out["global_custom_stats"]["cobaltcore_health"]["lab-control-plane"]  # what AWX keeps as artifacts
    assert stats["ready"] is result["ready"] and len(stats["control_planes"]) == len(result["control_planes"])


def test_phase4_fails_at_its_timeout_naming_the_failing_mariadb(region):
    """A MariaDB that stays not ready fails phase 4 when its wait times out (the lab's inventory: 45 s; 3 s here,
    the message is the same), naming the MariaDB, mariadb-operator's reason and message and the phases behind it."""
    with standins_restored():
        update_standins(lambda d: d.setdefault("failures", {}).update({"MariaDB/%s" % REGION_NAMESPACE: FAILURE}))
        wait_truthy(lambda: (_mariadb_condition() or {}).get("reason") == FAILURE["reason"], "MariaDB failing", 30)
        started = time.monotonic()
        rc, out = run_playbook(PHASE4, "-e", "control_plane_wait_timeout=3", COBALTCORE_LAB_DIR=str(config.STATE))
        seconds = time.monotonic() - started
    print("\nphase 4 against a failing MariaDB: failed after %.1fs" % seconds)
    assert rc != 0
    assert 3 <= seconds < 50, seconds
    (task, host, msg), = failures(out)
    assert host == "lab-control-plane" and "Wait for the region's ControlPlane" in task
    assert "infrastructure" in msg and "MariaDB" in msg, msg
    assert FAILURE["reason"] in msg and FAILURE["message"] in msg, msg
    # The phases waiting behind it: those after it that are not ready (the services depend on MariaDB).
    behind = msg.rsplit("waiting behind it: ", 1)[1].split(", ")
    assert behind and set(behind) <= set(PHASES[1:]), msg
    # Taken out of standins.yaml, the failure heals (mariadb-operator retries every Ready=False).
    wait_truthy(lambda: (_mariadb_condition() or {}).get("status") == "True", "MariaDB ready again", 60)
