"""Phases 1-2 on the lab: IronCore bootstrap and Gardener Shoots, from an empty region to a no-op re-run.

The session's `region` fixture empties the region, runs site.yml in check mode, builds it (-vvv) and
runs it again; the first tests judge those runs, the others read the built region. Tests that change
it do so through copies of the lab inventory or objects of their own, and restore what they change.
"""

import base64
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import (CLAIMS_NAMESPACE as CLAIMS, PRIVATE, PROJECT_NAMESPACE, REPO, VVV_LINE, ansible_env,
                      failures, get_object, kubeconfig_secrets, kubectl, lab_kubectl, objects, run_playbook,
                      task_results, writes)
from regionlab import config

SITE = REPO / "playbooks" / "site.yml"
BAREMETAL = REPO / "playbooks" / "baremetal.yml"
CLUSTERS = REPO / "playbooks" / "clusters.yml"
STANDINS = config.STATE / "standins.yaml"
POOLS = {"lab-control-plane": 1, "hv-pool-a": 2, "hv-pool-b": 1, "st-pool-a": 1, "st-pool-b": 1}
SHOOTS = {"lab-cp": "lab-control-plane", "hv-pool-a": "hv-pool-a", "hv-pool-b": "hv-pool-b",
          "st-pool-a": "st-pool-a", "st-pool-b": "st-pool-b"}
INVENTORY_BMCS = yaml.safe_load((REPO / "inventories/lab/host_vars/baremetal/ironcore.yml").read_text())["cobaltcore_bmcs"]
BMCS = len(INVENTORY_BMCS)
# site.yml limited to the hosts of phases 1-2 (and the preflight of those): phases 4-5 run on the
# control-plane cluster only, and a re-run of them is a no-op that takes most of a site.yml run.
PHASES_1_2 = "ironcore,gardener"


def lab_inventory(tmp_path, change):
    """A copy of the lab inventory with change(host_vars_dir) applied."""
    copy = tmp_path / "inventory"
    shutil.copytree(REPO / "inventories" / "lab", copy)
    change(copy / "host_vars")
    return copy


def set_pool(key, value, host):
    def change(host_vars):
        path = host_vars / host / "pool.yml"
        data = yaml.safe_load(path.read_text())
        data["cobaltcore_pool"][key] = value
        path.write_text(yaml.safe_dump(data))
    return change


def play(playbook, *args, inventory=None):
    started = time.monotonic()
    rc, out = run_playbook(playbook, *args, inventory=inventory, COBALTCORE_LAB_DIR=str(config.STATE))
    return rc, out, time.monotonic() - started


def failed_message(out):
    found = failures(out)
    assert found, "nothing failed"
    return " ".join(str(msg) for unused_task, unused_host, msg in found)


def configure_standins(**settings):
    data = yaml.safe_load(STANDINS.read_text()) or {}
    data.update(settings)
    STANDINS.write_text(yaml.safe_dump(data))
    time.sleep(1)  # the stand-ins re-read the file when it changes


def claims_by_pool():
    result = {}
    for claim in objects("baremetal", "serverclaims", CLAIMS):
        pool = claim["metadata"]["labels"]["c5c3.io/pool"]
        result.setdefault(pool, {})[claim["metadata"]["name"]] = (claim.get("spec") or {}).get("serverRef", {}).get("name")
    return result


def test_check_mode_on_a_fresh_region_writes_nothing(region):
    rc, out = region.check.rc, region.check.out
    assert rc == 0, failures(out)
    assert region.check.seen["writes_after"] == region.check.seen["writes_before"]
    assert out["stats"]["baremetal"]["changed"] > 0 and out["stats"]["garden"]["changed"] > 0
    bmc = task_results(out, "Register the BMCs and wait for their servers to be discovered")["baremetal"]
    assert sum(1 for r in bmc["results"] if r["kind"] == "BMC" and r["result"] == "created") == BMCS
    claims = task_results(out, "Claim the servers of every pool")["baremetal"]
    assert dict((p["name"], len(p["create"])) for p in claims["pools"]) == POOLS
    shoots = task_results(out, "Create or update every Shoot and wait for all of them together")["garden"]
    assert sorted(s["name"] for s in shoots["shoots"] if s["result"] == "created") == sorted(SHOOTS)
    assert not region.check.seen["private_exists"]
    assert region.check.seen["shoots"] == [] and region.check.seen["bmcs"] == []
    # The first build found nothing of it either: it created every BMC and Shoot.
    created = task_results(region.first.out, "Register the BMCs and wait for their servers to be discovered")
    assert sum(1 for r in created["baremetal"]["results"] if r["kind"] == "BMC" and r["result"] == "created") == BMCS
    fetched = task_results(region.first.out, "Create or update every Shoot and wait for all of them together")
    assert sorted(s["name"] for s in fetched["garden"]["shoots"] if s["result"] == "created") == sorted(SHOOTS)


def test_site_builds_phases_1_and_2_and_a_second_run_changes_nothing(region):
    assert region.first.rc == 0, region.first.failures()
    assert {b["status"]["state"] for b in objects("baremetal", "bmcs")} == {"Enabled"}
    assert len(objects("baremetal", "bmcs")) == BMCS
    claims = claims_by_pool()
    assert dict((pool, len(c)) for pool, c in claims.items()) == POOLS
    servers = dict((s["metadata"]["name"], s) for s in objects("baremetal", "servers"))
    bound = [name for pool in claims.values() for name in pool.values()]
    assert len(set(bound)) == len(bound) == sum(POOLS.values())
    for name in bound:
        assert servers[name]["status"]["state"] == "Reserved" and servers[name]["status"]["powerState"] == "On"
    shoots = objects("garden", "shoots", PROJECT_NAMESPACE)
    assert sorted(shoot["metadata"]["name"] for shoot in shoots) == sorted(SHOOTS)
    for shoot in shoots:
        status = shoot["status"]
        assert status["observedGeneration"] == shoot["metadata"]["generation"]
        assert status["lastOperation"]["state"] == "Succeeded"
        assert status["conditions"] and all(c["status"] == "True" for c in status["conditions"])
    second = region.second
    assert second.rc == 0, second.failures()
    assert all(s["changed"] == 0 for s in second.out["stats"].values()), second.out["stats"]
    assert second.seen["after"]["writes"] == second.seen["before"]["writes"]
    print("\nphases 0-5 on an empty region (-vvv): %.1fs; no-op re-run: %.1fs" % (region.first.seconds, second.seconds))


@pytest.mark.parametrize("shoot, cluster", sorted(SHOOTS.items()))
def test_each_pool_kubeconfig_reaches_its_own_cluster(lab, region, shoot, cluster):
    path = PRIVATE / ("%s.yaml" % cluster)
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    version = json.loads(kubectl(path, "version", "-o", "json").stdout)
    assert version["serverVersion"]["gitVersion"] == lab["clusters"][cluster]["version"]
    server = yaml.safe_load(path.read_text())["clusters"][0]["cluster"]["server"]
    assert server == lab["clusters"][cluster]["server"]
    # A short-lived credential, not the lab's own admin certificate.
    assert path.read_text() != (config.STATE / "kubeconfig" / ("%s.yaml" % cluster)).read_text()


def inventory_secrets():
    """The secrets the lab inventory hands the run, by what they are: the Keystone admin cloud's password (the
    preflight's clouds.yaml) and the credentials of the kubeconfig files it names (every cluster's)."""
    found = {}
    clouds = yaml.safe_load((config.STATE / "clouds.yaml").read_text())["clouds"]
    for name, cloud in clouds.items():
        found["clouds.yaml %s password" % name] = cloud["auth"]["password"]
    for path in sorted((config.STATE / "kubeconfig").glob("*.yaml")):
        for user in yaml.safe_load(path.read_text())["users"]:
            for key in ("client-key-data", "token", "password"):
                if user["user"].get(key):
                    found["kubeconfig %s %s" % (path.stem, key)] = user["user"][key]
    return found


def test_a_vvv_run_shows_no_bmc_password_or_kubeconfig(region):
    password = (config.STATE / "secrets" / "bmc-lab-rack-1").read_text().strip()
    # The build from an empty region (-vvv) registered the BMCs with it.
    assert VVV_LINE in region.first.text
    assert password not in region.first.text
    assert base64.b64encode(password.encode()).decode() not in region.first.text
    # And read the inventory's other secrets: the admin cloud (preflight) and every cluster's kubeconfig.
    others = inventory_secrets()
    assert any(what.startswith("clouds.yaml") for what in others) and any("client-key-data" in w for w in others)
    for what, value in others.items():
        assert len(value) >= 16, what
        assert value not in region.first.text, "%s appears in the -vvv build" % what
    fetched = region.first.seen["kubeconfig_secrets"]
    assert len(fetched) > len(SHOOTS)
    for secret in fetched:
        assert secret not in region.first.text
    old = kubeconfig_secrets()
    # renew_before just under the lifetime: every kubeconfig is fetched again during this run. Phases 1-2
    # on the built region: the BMCs (with their password) and the Shoots; phases 4-5 handle neither.
    # A non-default Ignition holding a marker secret goes the way of the inventory's own (phase 1, its claims).
    marker = "ignition-marker-%s" % os.urandom(8).hex()
    users = [{"name": "core", "passwordHash": marker}]
    ignition = json.dumps({"ignition": {"version": "3.4.0"}, "passwd": {"users": users}})
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-vvv", "-i", str(REPO / "inventories" / "lab"), str(SITE),
           "--limit", PHASES_1_2, "-e", "gardener_clusters_kubeconfig_renew_before=21599",
           "-e", json.dumps({"baremetal_bootstrap_ignition": {"hv-pool-a": ignition}})]
    env = ansible_env(ANSIBLE_STDOUT_CALLBACK="default", COBALTCORE_LAB_DIR=str(config.STATE))
    try:
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600, check=False, env=env)
        assert proc.returncode == 0, proc.stdout[-3000:]
        stored = [base64.b64decode(s["data"]["ignition"]).decode() for s in json.loads(lab_kubectl(
            "baremetal", "get", "secrets", "-A", "-o", "json").stdout)["items"] if "ignition" in (s.get("data") or {})]
        assert any(marker in text for text in stored), "the marker Ignition was not stored"
    finally:
        # The region's own Ignition again, for the tests after this one.
        restore = subprocess.run(cmd[:-6] + ["--limit", "ironcore"], cwd=REPO, capture_output=True, text=True,
                                 timeout=600, check=False, env=env)
        assert restore.returncode == 0, restore.stdout[-3000:]
    assert marker not in proc.stdout + proc.stderr
    new = kubeconfig_secrets()
    assert set(new) != set(old), "the kubeconfigs were not renewed"
    output = proc.stdout + proc.stderr
    assert len(output) > 10000
    assert password not in output
    assert base64.b64encode(password.encode()).decode() not in output
    for secret in old + new:
        assert secret not in output


def test_too_few_servers_fail_before_any_claim_is_created(region, tmp_path):
    inventory = lab_inventory(tmp_path, set_pool("workers", 6, "hv-pool-a"))
    before = claims_by_pool()
    started = writes()
    rc, out, unused = play(BAREMETAL, inventory=inventory)
    assert rc != 0
    message = failed_message(out)
    # 4 lab-kvm machines, 2 in hv-pool-a's zone lab-1a (it holds both), 2 in lab-1b (hv-pool-b's and a free one).
    assert ("invalid input, nothing was changed: pools[1].count: pool hv-pool-a is 4 server(s) short: it needs 4 more "
            "matching c5c3.io/machine-class=lab-kvm, c5c3.io/machine-pool=lab-rack-1, topology.kubernetes.io/zone=lab-1a, "
            "and 0 can be claimed; 2 match in all (Reserved 2)") in message
    assert claims_by_pool() == before
    assert writes()[("baremetal", "serverclaims")] == started[("baremetal", "serverclaims")]


def test_a_wrong_bmc_password_on_the_converged_region_fails_before_any_write_and_the_right_one_converges(region):
    """metal-operator keeps a converged BMC Enabled and Ready after a password change (its connection check needs
    no login), so phase 1 logs in to the BMCs itself before writing a changed BMCSecret."""
    def stored_password():
        secret = json.loads(lab_kubectl("baremetal", "get", "bmcsecret", "bmc-lab-rack-1", "-o", "json").stdout)
        return secret["data"]["password"]
    before = stored_password()
    started = writes()
    wrong = {"cobaltcore_bmc_credentials": {"lab-rack-1": {"username": "lab-bmc-admin",
                                                           "password": "not-the-rack-password-%s" % os.urandom(4).hex()}}}
    rc, out, seconds = play(BAREMETAL, "-e", json.dumps(wrong))
    assert rc != 0
    message = failed_message(out)
    assert message.startswith("invalid input, nothing was changed: "), message
    for index, bmc in enumerate(INVENTORY_BMCS):
        assert ("bmcs[%d]: BMC %s with BMCSecret bmc-lab-rack-1 refuses the credentials (HTTP 401 from "
                "http://%s:%d/redfish/v1/Systems)" % (index, bmc["name"], bmc["ip"], bmc["port"])) in message, message
    assert "(a new password in the inventory is set on the BMCs first: playbooks/rotate.yml -e rotate=bmc-credentials" \
        in message
    assert wrong["cobaltcore_bmc_credentials"]["lab-rack-1"]["password"] not in out
    assert stored_password() == before
    assert writes()[("baremetal", "bmcsecrets")] == started[("baremetal", "bmcsecrets")]
    assert seconds < 60
    # The inventory's password (the right one): nothing to change, and every BMC is Enabled and Ready.
    rc, out, unused = play(BAREMETAL)
    assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    for bmc in objects("baremetal", "bmcs"):
        ready = [c for c in bmc["status"]["conditions"] if c["type"] == "Ready"]
        assert bmc["status"]["state"] == "Enabled" and ready[0]["status"] == "True", bmc["status"]


def test_growing_a_pool_updates_its_shoot_and_claims_only_the_new_server(region, tmp_path):
    before = claims_by_pool()
    inventory = lab_inventory(tmp_path, set_pool("workers", 2, "hv-pool-b"))
    restored = False
    try:
        rc, out, unused = play(SITE, "--limit", PHASES_1_2, inventory=inventory)
        assert rc == 0, failures(out)
        after = claims_by_pool()
        assert after["hv-pool-b"]["hv-pool-b-1"] == before["hv-pool-b"]["hv-pool-b-1"]
        assert len(after["hv-pool-b"]) == 2 and after["hv-pool-b"]["hv-pool-b-2"]
        assert dict((p, c) for p, c in after.items() if p != "hv-pool-b") == dict(
            (p, c) for p, c in before.items() if p != "hv-pool-b")
        shoots = task_results(out, "Create or update every Shoot and wait for all of them together")["garden"]["shoots"]
        assert dict((s["name"], s["result"]) for s in shoots) == dict(
            (name, "configured" if name == "hv-pool-b" else "unchanged") for name in SHOOTS)
        shoot = get_object("garden", "-n", PROJECT_NAMESPACE, "shoot", "hv-pool-b", missing_ok=False)
        assert shoot["spec"]["provider"]["workers"][0]["maximum"] == 2
        assert shoot["status"]["lastOperation"]["type"] == "Reconcile"
        # Back to the inventory's size: the surplus claim is only released when asked to.
        rc, out, unused = play(BAREMETAL)
        assert rc == 0 and len(claims_by_pool()["hv-pool-b"]) == 2
        rc, out, unused = play(SITE, "--limit", PHASES_1_2, "-e", "baremetal_bootstrap_release_surplus=true")
        restored = rc == 0
        assert rc == 0, failures(out)
        assert claims_by_pool() == before
    finally:
        if not restored:  # the region is shared: put it back even when an assertion failed
            play(SITE, "--limit", PHASES_1_2, "-e", "baremetal_bootstrap_release_surplus=true")


def test_an_immutable_shoot_change_is_refused_before_any_write(region):
    settings = yaml.safe_load((REPO / "inventories/lab/host_vars/garden/gardener.yml").read_text())["cobaltcore_gardener"]
    settings["networking"]["type"] = "cilium"
    settings["kubernetes_version"] = "1.31"
    before = writes()
    rc, out, unused = play(CLUSTERS, "-e", json.dumps({"cobaltcore_gardener": settings}))
    assert rc != 0
    message = failed_message(out)
    for shoot in SHOOTS:
        assert "Shoot %s spec.networking.type: field is immutable" % shoot in message
        assert "Shoot %s spec.kubernetes.version: kubernetes version downgrade is not supported" % shoot in message
    assert writes() == before


def test_a_failing_shoot_fails_the_play_at_once_with_gardeners_last_errors(region, tmp_path):
    def add_pool(host_vars):
        (host_vars / "hv-pool-x").mkdir()
        (host_vars / "hv-pool-x" / "pool.yml").write_text(yaml.safe_dump({"cobaltcore_pool": {
            "region": "lab", "workers": 1, "zone": "lab-1a",
            "ironcore": {"machine_pool": "lab-rack-1", "machine_class": "lab-kvm"}}}))
        hosts = host_vars.parent / "hosts.yml"
        data = yaml.safe_load(hosts.read_text())
        data["all"]["children"]["hypervisor_pools"]["hosts"]["hv-pool-x"] = {}
        hosts.write_text(yaml.safe_dump(data))
    inventory = lab_inventory(tmp_path, add_pool)
    description = "infrastructure of hv-pool-x: the IronCore machine pool has no capacity left"
    configure_standins(shoots={"hv-pool-x": {"fail": description}})
    try:
        rc, out, seconds = play(CLUSTERS, "--limit", "garden", inventory=inventory)
        assert rc != 0
        message = failed_message(out)
        assert "Shoot %s/hv-pool-x" % PROJECT_NAMESPACE in message and "Failed" in message
        assert description in message
        assert seconds < 60, seconds
    finally:
        configure_standins(shoots={})
        remove = tmp_path / "remove.yml"
        remove.write_text(yaml.safe_dump([{
            "name": "remove hv-pool-x", "hosts": "garden", "gather_facts": False, "tasks": [{
                "name": "Delete the Shoot", "c5c3.cobaltcore.gardener_shoot": {
                    "kubeconfig": "{{ cobaltcore_kubeconfig }}", "project": "cobaltcore", "state": "absent",
                    "shoots": [{"name": "hv-pool-x"}], "wait_timeout": 60}}]}]))
        rc, out, unused = play(remove)
    assert rc == 0, failures(out)
    assert task_results(out, "Delete the Shoot")["garden"]["shoots"] == [{"name": "hv-pool-x", "result": "deleted"}]
    assert [s["metadata"]["name"] for s in objects("garden", "shoots", PROJECT_NAMESPACE)
            if s["metadata"]["name"] == "hv-pool-x"] == []


def test_server_info_lists_the_claimed_servers(region, tmp_path):
    path = tmp_path / "info.yml"
    path.write_text(yaml.safe_dump([{"name": "info", "hosts": "baremetal", "gather_facts": False, "tasks": [{
        "name": "Servers", "register": "found", "c5c3.cobaltcore.ironcore_server_info": {
            "kubeconfig": "{{ cobaltcore_kubeconfig }}", "claimed": True,
            "selector": {"matchLabels": {"c5c3.io/machine-class": "lab-kvm"}}}}]}]))
    rc, out, unused = play(path)
    assert rc == 0
    result = task_results(out, "Servers")["baremetal"]
    assert result["counts"] == {"Reserved": 3}
    assert {s["claim"]["namespace"] for s in result["servers"]} == {CLAIMS}
    assert all(s["power"] == "On" and s["labels"]["c5c3.io/machine-pool"] == "lab-rack-1" for s in result["servers"])
