"""site.yml the way AWX runs a job (tests/integration/awx_job.py): the session's no-op re-run of the converged
region (the `region` fixture) is such a job, started together with the region's first build (it waits for the
build's run lock). Its events, artifacts and set_stats summary are judged here; the
tests that judge the re-run itself read it through the events (awx_job.json_output).
"""

import json

import yaml

from awx_job import VAULT_PASSWORD
from conftest import PRIVATE, REPO, failures, run_playbook, task_results
from regionlab import config
from regionlab.standins import gardenlet

OPERATORS = REPO / "playbooks" / "operators.yml"
FETCH = "Fetch the admin kubeconfigs of the play's Shoots that this controller lacks"
SHOOT_HOSTS = [c.name for c in config.clusters() if set(c.groups) & set(gardenlet.SHOOT_GROUPS)]

PHASES = ["preflight", "baremetal", "clusters", "operators", "control_plane", "keystone", "hypervisors", "network",
          "storage", "tenants"]


def test_site_through_ansible_runner_transmit_worker_process(region):
    job = region.second.seen["job"]
    events, artifacts, worker_dir, status = job.events, job.artifacts, job.worker_dir, job.status
    failed = [(e["event_data"].get("task"), e["event_data"].get("host"), e["event_data"].get("res", {}).get("msg"))
              for e in events if e["event"] == "runner_on_failed"]
    assert job.returncodes == (0, 0, 0), job.stderr[-3000:]
    assert status == "successful", (status, failed, job.stdout[-3000:])
    assert job.rc == "0"

    # The events AWX shows: the whole site.yml, every phase's plays, no host failed.
    kinds = [e["event"] for e in events]
    assert kinds[0] == "playbook_on_start" and kinds[-1] == "playbook_on_stats"
    plays = [e["event_data"]["play"] for e in events if e["event"] == "playbook_on_play_start"]
    # Each phase playbook ends with the play that releases the region's run lock when run on its own; site.yml's
    # own last play releases it (docs/run-lock.md).
    release = "Release the region's run lock"
    phases = [p for p in plays if p != release]
    assert plays[0].startswith("Preflight") and phases[-1] == "Phase 8 - database backups", plays
    assert plays[-1] == release, plays
    assert failed == []
    # It started with the region's first build (the fixture) and waited for the build's run lock, saying whose.
    waited = [e["event_data"]["res"]["msg"] for e in events if e["event"] == "runner_on_ok"
              and e["event_data"].get("task") == "Show who holds the region's run lock while this run waits for it"]
    assert len(waited) == 1 and "the run lock is held by %s" % region.second.seen["build_holder"] in waited[0], waited
    stats = events[-1]["event_data"]
    assert sum(stats["changed"].values()) == 0, stats["changed"]  # a converged region: a no-op
    assert "lab-control-plane" in stats["ok"] and not stats["failures"]

    # The service clusters' kubeconfigs are the credential's injected files (preflight looks at each; the job's
    # preflight ran before the build fetched the Shoots' kubeconfigs, so theirs were not there yet).
    service = ("garden", "baremetal", "management-cluster")
    looked = dict((e["event_data"]["host"], e["event_data"]["res"]["ansible_facts"]["preflight_kubeconfig_path"])
                  for e in events
                  if e["event"] == "runner_on_ok" and e["event_data"].get("task") == "Look for the cluster's kubeconfig"
                  and e["event_data"]["role"] == "preflight" and e["event_data"]["host"] in service)
    assert looked == {
        "garden": str(worker_dir / "env" / "credential_garden"),
        "baremetal": str(worker_dir / "env" / "credential_baremetal"),
        "management-cluster": str(worker_dir / "env" / "credential_management_cluster")}

    # The set_stats summary for a workflow's next node (artifact_data, and AWX's job artifacts).
    summary = stats["artifact_data"]["cobaltcore_phases"]
    assert sorted(summary) == sorted(PHASES)
    changed = dict((phase, dict((host, entry["changed"]) for host, entry in hosts.items()))
                   for phase, hosts in summary.items())
    assert all(count == 0 for hosts in changed.values() for count in hosts.values()), changed
    assert set(summary["preflight"]) == set(stats["ok"])
    assert summary["clusters"]["garden"]["clusters"], summary["clusters"]
    assert summary["operators"]["lab-control-plane"]["releases"] > 0
    health = summary["control_plane"]["lab-control-plane"]["health"]
    assert health and set(health.values()) <= {"ready", "blocked", "failed", "not-enabled"}, health
    assert summary["tenants"]["lab-control-plane"]["tenants"], summary["tenants"]
    assert summary["tenants"]["lab-control-plane"]["health"], summary["tenants"]
    # No secret of the job reaches its artifacts' summary (the injected files' content, the vault password).
    text = json.dumps(summary)
    assert VAULT_PASSWORD not in text and "client-key-data" not in text
    output = (artifacts / "stdout").read_text() + json.dumps(events)
    assert VAULT_PASSWORD not in output and "client-key-data" not in output

    # What the other tests read of this run: the JSON callback's document made from these events.
    out = region.second.out
    assert [p["play"]["name"] for p in out["plays"]] == plays
    assert set(out["stats"]) == set(stats["ok"]) and all(counts["changed"] == 0 for counts in out["stats"].values())
    ran = [(host, task["task"]["name"]) for play in out["plays"] for task in play["tasks"] for host in task["hosts"]]
    assert len(ran) == len([e for e in events if e["event"] in ("runner_on_ok", "runner_on_skipped")])
    # Every result fits in an event (AWX drops a result above MAX_EVENT_RES, 700000 characters).
    assert [(h, t["task"]["name"]) for p in out["plays"] for t in p["tasks"] for h, r in t["hosts"].items()
            if r.get("res_dropped")] == []


def test_a_phase_job_fetches_the_shoots_kubeconfigs_its_directory_lacks(region, tmp_path):
    """A workflow's node after phase 2 (phase 3 here) runs in a job directory of its own, without the kubeconfigs
    phase 2 fetched (cobaltcore_private_dir is the job's, as in AWX): it fetches those of its play's Shoots once,
    changes nothing in the region, and a check-mode job writes no kubeconfig."""
    job_dir = tmp_path / "job"
    rc, out = run_playbook(OPERATORS, "-e", "cobaltcore_private_dir=%s" % job_dir, COBALTCORE_LAB_DIR=str(config.STATE))
    assert rc == 0, failures(out)
    assert all(counts["changed"] == 0 for counts in out["stats"].values()), out["stats"]
    fetched = [r for r in task_results(out, FETCH).values() if "shoots" in r]
    assert len(fetched) == 1, fetched  # one call for the play
    assert sorted(s["path"] for s in fetched[0]["shoots"] if s["renewed"]) == sorted(
        str(job_dir / "kubeconfig" / ("%s.yaml" % host)) for host in SHOOT_HOSTS), fetched[0]["shoots"]
    for host in SHOOT_HOSTS:
        path = job_dir / "kubeconfig" / ("%s.yaml" % host)
        assert path.stat().st_mode & 0o777 == 0o600, path
        lab = yaml.safe_load((PRIVATE / ("%s.yaml" % host)).read_text())
        assert yaml.safe_load(path.read_text())["clusters"] == lab["clusters"], host  # the same Shoot's server

    check_dir = tmp_path / "check-job"
    rc, out = run_playbook(OPERATORS, "--check", "-e", "cobaltcore_private_dir=%s" % check_dir,
                           COBALTCORE_LAB_DIR=str(config.STATE))
    assert rc == 0, failures(out)
    assert not check_dir.exists(), sorted(check_dir.rglob("*"))
