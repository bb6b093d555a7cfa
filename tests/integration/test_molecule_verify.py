"""molecule/default/verify.yml reads the region itself: it fails when the region is not what the inventory says.

`make molecule` runs it after converge and idempotence, where it passes. Here it runs against the
session's region, limited to a few hosts, with an inventory that wants one more server in a pool or
a catalog that lacks services: the check of the claims or of K-ORC's catalog fails, what comes
before it (the preflight, the Shoots, the Keystone bootstrap) passes.
"""

import json
import shutil

import yaml

from conftest import REPO, run_playbook
from regionlab import config

VERIFY = REPO / "molecule" / "default" / "verify.yml"
PREFLIGHT_CHECK = "Check that every cluster answered (a Shoot's kubeconfig was fetched) and has no problem"


def _results(out):
    """{host: [(task, failed)]} of a JSON-callback run."""
    found = {}
    for play in out["plays"]:
        for task in play["tasks"]:
            for host, result in task["hosts"].items():
                found.setdefault(host, []).append((task["task"]["name"].split(" : ", 1)[-1], bool(result.get("failed"))))
    return found


def _failed(out):
    return dict((host, [task for task, failed in tasks if failed]) for host, tasks in _results(out).items())


def _verify(*args, inventory=None):
    return run_playbook(VERIFY, *args, inventory=inventory, COBALTCORE_LAB_DIR=str(config.STATE))


def test_verify_fails_when_a_pool_has_fewer_claims_than_the_inventory_wants(region, tmp_path):
    inventory = tmp_path / "inventory"
    shutil.copytree(REPO / "inventories" / "lab", inventory)
    pool = inventory / "host_vars" / "hv-pool-b" / "pool.yml"
    data = yaml.safe_load(pool.read_text())
    data["cobaltcore_pool"]["workers"] = 2
    pool.write_text(yaml.safe_dump(data))
    rc, out = _verify("--limit", "baremetal", inventory=inventory)
    assert rc != 0
    assert _failed(out) == {"baremetal": ["Check the BMCs, the number of claims of every pool and the servers they hold"]}
    assert (PREFLIGHT_CHECK, False) in _results(out)["baremetal"]


def test_verify_fails_when_the_catalog_differs_and_passes_the_shoots(region):
    rc, out = _verify("--limit", "garden,lab-control-plane", "-e", json.dumps({"verify_services": ["keystone", "glance"]}))
    assert rc != 0
    assert _failed(out) == {
        "garden": [],
        "lab-control-plane": ["Check that K-ORC holds every service of the catalog, two endpoints each, and the service users"],
    }
    found = _results(out)
    assert ("Check that exactly the region's Shoots exist and each one succeeded for its generation", False) in found["garden"]
    assert ("Check the bootstrap in Keystone, as the bootstrap admin", False) in found["lab-control-plane"]
