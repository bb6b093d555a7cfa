"""The preflight play that opens site.yml: passes on the lab, names every problem otherwise."""

import json
import shutil
import time

from conftest import REPO, run_playbook, task_results

PREFLIGHT = REPO / "playbooks" / "preflight.yml"
REPORT = "Report the problems of this cluster"
COLLECT = "Collect the problems of this cluster"


def test_preflight_passes_on_every_lab_cluster(lab, region):
    rc, out = run_playbook(PREFLIGHT)
    assert rc == 0, json.dumps([t["hosts"] for p in out["plays"] for t in p["tasks"]
                                if any(h.get("failed") for h in t["hosts"].values())])[:3000]
    assert set(out["stats"]) == set(lab["clusters"])
    assert all(s["failures"] == 0 and s["changed"] == 0 for s in out["stats"].values())
    facts = task_results(out, COLLECT)
    found = task_results(out, "Look for the cluster's kubeconfig")
    # On the built region every Shoot's kubeconfig has been fetched: each cluster is reached with its own.
    assert set(facts) == set(found) == set(lab["clusters"])
    assert all(result["ansible_facts"]["preflight_kubeconfig_exists"] is True for result in found.values()), found
    for host, result in facts.items():
        assert result["ansible_facts"]["preflight_problems"] == []
        assert result["ansible_facts"]["preflight_server_version"] == lab["clusters"][host]["version"]


def _problems(out, host):
    result = task_results(out, REPORT)[host]
    assert result["failed"]
    return result["msg"][1:]


def test_preflight_names_every_problem_of_a_cluster(lab):
    extra = {
        "preflight_kubernetes_max_version": "1.30",
        "preflight_kubernetes_min_version": "1.29",
        "preflight_api_groups_by_group": {"control_plane": ["apps", "missing.example.com"]},
        "preflight_keystone_cloud": "no-such-cloud",
    }
    rc, out = run_playbook(PREFLIGHT, "--limit", "lab-control-plane", "-e", json.dumps(extra))
    assert rc != 0
    problems = _problems(out, "lab-control-plane")
    assert len(problems) == 3, problems
    assert "outside the supported range 1.29 to 1.30" in problems[0]
    assert problems[1].startswith("API group missing.example.com is not served")
    assert "Keystone: no token for cloud no-such-cloud" in problems[2]
    assert problems[2].endswith("Cloud no-such-cloud was not found.")


def test_preflight_reports_a_missing_kubeconfig(lab, tmp_path):
    missing = tmp_path / "nope.yaml"
    rc, out = run_playbook(PREFLIGHT, "--limit", "management-cluster", "-e", "cobaltcore_kubeconfig=%s" % missing)
    assert rc != 0
    assert _problems(out, "management-cluster") == ["kubeconfig %s does not exist" % missing]


def test_a_shoot_without_its_kubeconfig_yet_is_no_problem(lab, tmp_path):
    missing = tmp_path / "nope.yaml"
    rc, out = run_playbook(PREFLIGHT, "--limit", "hv-pool-a", "-e", "cobaltcore_kubeconfig=%s" % missing)
    assert rc == 0
    facts = task_results(out, COLLECT)["hv-pool-a"]["ansible_facts"]
    assert facts["preflight_problems"] == [] and facts["preflight_server_version"] == ""


def test_preflight_reports_an_unreachable_api_server(lab, tmp_path, kubeconfigs):
    with open(kubeconfigs["hv-pool-b"]) as handle:
        text = handle.read()
    port = lab["clusters"]["hv-pool-b"]["server"].rsplit(":", 1)[1]
    dead = tmp_path / "dead.yaml"
    dead.write_text(text.replace(":%s" % port, ":1"))
    started = time.time()
    rc, out = run_playbook(PREFLIGHT, "--limit", "hv-pool-b", "-e", "cobaltcore_kubeconfig=%s" % dead)
    assert rc != 0
    # Three tries of a short client, not a minute of retries each.
    assert time.time() - started < 45
    (problem,) = _problems(out, "hv-pool-b")
    assert problem.startswith("API server not reachable with %s" % dead)


def test_keystone_is_checked_only_when_the_inventory_names_an_admin_cloud(lab):
    """A fresh region has no Keystone before phase 5 bootstraps the region cluster's own."""
    rc, out = run_playbook(PREFLIGHT, "--limit", "lab-control-plane", "-e",
                           json.dumps({"cobaltcore_keystone_cloud": "", "cobaltcore_keystone_clouds_yaml": ""}))
    assert rc == 0
    asked = task_results(out, "Ask Keystone for a token with the admin cloud")["lab-control-plane"]
    assert asked.get("skipped") is True
    rc, out = run_playbook(PREFLIGHT, "--limit", "lab-control-plane")
    asked = task_results(out, "Ask Keystone for a token with the admin cloud")["lab-control-plane"]
    assert rc == 0 and not asked.get("skipped") and asked["user_id"] and asked["expires_at"], asked
    assert "auth_token" not in asked  # whom the token is for, never the token


def test_a_bad_region_model_is_refused_in_preflight_naming_its_pools(lab, tmp_path, kubeconfigs):
    """A copy of the lab inventory with bad workers and a machine class no BMC carries: preflight refuses it,
    before any phase writes, naming the pools by their inventory hosts."""
    inventory = tmp_path / "lab"
    shutil.copytree(REPO / "inventories" / "lab", inventory)
    for host, old, new in (("hv-pool-a", "workers: 2", "workers: -1"), ("hv-pool-b", "workers: 1", 'workers: "one"'),
                           ("st-pool-b", "machine_class: lab-storage", "machine_class: lab-gpu")):
        path = inventory / "host_vars" / host / "pool.yml"
        text = path.read_text()
        assert old in text, (host, old)
        path.write_text(text.replace(old, new, 1))
    ironcore = inventory / "host_vars" / "baremetal" / "ironcore.yml"
    ironcore.write_text(ironcore.read_text().replace("machine_classes: [lab-general,", "machine_classes: [lab-gpu, lab-general,"))
    rc, out = run_playbook(PREFLIGHT, "--limit", "lab-control-plane", inventory=inventory)
    assert rc != 0
    (result,) = task_results(out, "Report the problems of the region model").values()
    assert result["msg"][1:] == [
        "region hypervisor_pools[hv-pool-a].workers: must be at least 1, got -1",
        "region hypervisor_pools[hv-pool-b].workers: must be an integer, got string"]
    # With the workers fixed, the machine class nothing carries is the IronCore cluster's problem.
    for host, old in (("hv-pool-a", "workers: -1"), ("hv-pool-b", 'workers: "one"')):
        path = inventory / "host_vars" / host / "pool.yml"
        path.write_text(path.read_text().replace(old, "workers: 1", 1))
    rc, out = run_playbook(PREFLIGHT, "--limit", "baremetal", "-e", "cobaltcore_kubeconfig=%s" % kubeconfigs["baremetal"],
                           inventory=inventory)
    assert rc != 0
    (problem,) = _problems(out, "baremetal")
    assert problem.startswith("region storage_pools[st-pool-b].ironcore: no BMC or Server carries machine pool "
                              "lab-rack-1 and machine class lab-gpu, so no server can be claimed for st-pool-b"), problem


def test_the_ironcore_check_counts_what_ironcore_has_without_the_inventorys_bmcs(lab, region):
    """eu-de-1 lists no BMC: the pools are checked against the BMCs and Servers IronCore already has."""
    rc, out = run_playbook(PREFLIGHT, "--limit", "baremetal", "-e", json.dumps({"cobaltcore_bmcs": []}))
    assert rc == 0, _problems(out, "baremetal")
    rc, out = run_playbook(PREFLIGHT, "--limit", "baremetal", "-e", json.dumps({"cobaltcore_bmcs": [],
                           "preflight_reads": []}))
    assert rc == 0  # nothing read, nothing judged


def test_the_garden_is_checked_for_what_phase_2_needs(lab):
    """A copy of eu-de-1's garden settings on the lab garden: its project does not exist, and more."""
    settings = {"project": "cc", "cloud_profile": {"kind": "CloudProfile", "name": "ironcore-metal"},
                "credentials_binding": "ironcore-metal", "provider_type": "ironcore-metal",
                "kubernetes_version": "1.37", "machine_image": {"name": "gardenlinux", "version": "1877.3.0"},
                "region": "eu-de-1", "purpose": "production"}
    rc, out = run_playbook(PREFLIGHT, "--limit", "garden", "-e", json.dumps({"cobaltcore_gardener": settings}))
    assert rc != 0
    assert _problems(out, "garden") == [
        "gardener.project: Gardener project cc does not exist in the garden",
        "gardener.region: CloudProfile ironcore-metal offers no region eu-de-1 (it offers lab)",
        "gardener.kubernetes_version: CloudProfile ironcore-metal offers no Kubernetes 1.37 (it offers 1.36.0, 1.35.1, "
        "1.34.3, 1.33.4, 1.32.8)",
        "gardener.region: no Seed can host the Shoots: none of the 1 Seeds is usable (not deleting, visible, "
        "gardenlet ready) for provider ironcore-metal in region eu-de-1"]
