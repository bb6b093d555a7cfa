"""site.yml the way AWX runs a job: `ansible-runner transmit | ansible-runner worker | ansible-runner process`
(AWX -> receptor -> execution node -> AWX), on the converged region, which the run must leave as it is.

The job's private data dir is made as AWX makes it: the project (the SCM checkout: ansible.cfg, playbooks,
inventories), the inventory as AWX's SCM inventory source imported it (`ansible-inventory --list --export`
of inventories/lab, handed to the job as a script), the credentials as the custom credential types of
awx/credential_types.yml inject them (files, environment variables), the job template's extra vars.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from conftest import REPO, config

BIN = Path(sys.executable).parent


class _AwxLoader(yaml.SafeLoader):
    """awx/ files mark AWX's own templates !unsafe (for Ansible); here they are plain strings."""


_AwxLoader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def awx_file(name):
    return yaml.load((REPO / "awx" / name).read_text(), Loader=_AwxLoader)


PHASES = ["preflight", "baremetal", "clusters", "operators", "control_plane", "keystone", "hypervisors", "network",
          "storage", "tenants"]
VAULT_PASSWORD = "not-a-real-vault-password"


def _project(root):
    """The project as AWX checks it out (only what a job reads)."""
    root.mkdir(parents=True)
    shutil.copy(REPO / "ansible.cfg", root / "ansible.cfg")
    shutil.copytree(REPO / "playbooks", root / "playbooks")
    shutil.copytree(REPO / "inventories", root / "inventories",
                    ignore=shutil.ignore_patterns(".private"))


def _credential_injection(worker_dir):
    """Files and environment of the two credential types, as AWX renders their injectors; paths are where
    the worker unpacks the job (AWX: /runner in the execution environment)."""
    types = dict((t["name"], t) for t in awx_file("credential_types.yml")["cobaltcore_credential_types"])
    kubeconfigs = config.STATE / "kubeconfig"
    inputs = {"CobaltCore region kubeconfigs": dict(
        (field["id"], (kubeconfigs / ("%s.yaml" % field["id"].replace("_", "-"))).read_text())
        for field in types["CobaltCore region kubeconfigs"]["inputs"]["fields"]),
        "CobaltCore vault password": {"vault_password": VAULT_PASSWORD}}
    files, env = {}, {}
    for name, values in inputs.items():
        injectors = types[name]["injectors"]
        filenames = {}
        for key, template in injectors.get("file", {}).items():
            field = key.split(".", 1)[1]
            filenames[field] = "env/credential_%s" % field
            files[filenames[field]] = template.replace("{{ %s }}" % field, values[field])
        for var, template in injectors.get("env", {}).items():
            field = template.split("tower.filename.", 1)[1].split("}}")[0].strip()
            env[var] = str(worker_dir / filenames[field])
    return files, env


def _private_data_dir(tmp_path, worker_dir):
    data = tmp_path / "job"
    _project(data / "project")
    # AWX's SCM inventory source: the import reads the project's inventories/<region>, the job gets a script.
    proc = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(data / "project" / "inventories" / "lab"),
                           "--list", "--export"], capture_output=True, text=True, check=True, timeout=120,
                          env=dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg")))
    (data / "inventory").mkdir()
    script = data / "inventory" / "hosts"
    script.write_text("#!/bin/sh\ncat <<'EOF'\n%s\nEOF\n" % proc.stdout)
    script.chmod(0o700)
    files, env = _credential_injection(worker_dir)
    (data / "env").mkdir()
    for name, text in files.items():
        (data / name).write_text(text)
        (data / name).chmod(0o600)
    env.update({
        # The job template's environment (awx/ job templates): the lab's own settings.
        "COBALTCORE_LAB_DIR": str(config.STATE),
        "COBALTCORE_LAB_PORT_BASE": os.environ.get("COBALTCORE_LAB_PORT_BASE", ""),
        # The execution environment holds the collection (meta/execution-environment.yml).
        "ANSIBLE_COLLECTIONS_PATH": str(REPO / ".cache" / "collections"),
        "ANSIBLE_NOCOLOR": "1",
        "PATH": "%s:%s" % (BIN, os.environ.get("PATH", "")),
    })
    (data / "env" / "envvars").write_text(json.dumps(env))
    # The job template's extra vars (AWX's ALLOW_JINJA_IN_EXTRA_VARS=template lets them template).
    templates = awx_file("job_templates.yml")
    site = next(t for t in templates["cobaltcore_job_templates"] if t["playbook"] == "playbooks/site.yml")
    assert site["extra_vars"] == "{{ cobaltcore_awx_extra_vars }}"
    (data / "env" / "extravars").write_text(json.dumps(templates["cobaltcore_awx_extra_vars"]))
    return data


def test_site_through_ansible_runner_transmit_worker_process(region, tmp_path):
    worker_dir = tmp_path / "worker"
    data = _private_data_dir(tmp_path, worker_dir)
    started = time.monotonic()
    transmit = subprocess.Popen([str(BIN / "ansible-runner"), "transmit", str(data), "-p", "playbooks/site.yml",
                                 "--ident", "awx-job-1"], stdout=subprocess.PIPE)
    worker = subprocess.Popen([str(BIN / "ansible-runner"), "worker", "--private-data-dir", str(worker_dir)],
                              stdin=transmit.stdout, stdout=subprocess.PIPE)
    transmit.stdout.close()
    process = subprocess.run([str(BIN / "ansible-runner"), "process", str(data), "--ident", "awx-job-1"],
                             stdin=worker.stdout, capture_output=True, text=True, timeout=600, check=False)
    worker.wait(timeout=60)
    transmit.wait(timeout=60)
    seconds = time.monotonic() - started
    artifacts = data / "artifacts" / "awx-job-1"
    status = (artifacts / "status").read_text() if (artifacts / "status").exists() else None
    events = sorted((json.loads(p.read_text()) for p in (artifacts / "job_events").glob("*.json")),
                    key=lambda event: event["counter"])
    failed = [(e["event_data"].get("task"), e["event_data"].get("host"), e["event_data"].get("res", {}).get("msg"))
              for e in events if e["event"] == "runner_on_failed"]
    assert (transmit.returncode, worker.returncode, process.returncode) == (0, 0, 0), process.stderr[-3000:]
    assert status == "successful", (status, failed, process.stdout[-3000:])
    assert (artifacts / "rc").read_text() == "0"

    # The events AWX shows: the whole site.yml, every phase's plays, no host failed.
    kinds = [e["event"] for e in events]
    assert kinds[0] == "playbook_on_start" and kinds[-1] == "playbook_on_stats"
    plays = [e["event_data"]["play"] for e in events if e["event"] == "playbook_on_play_start"]
    # Each phase playbook ends with the play that releases the region's run lock when run on its own; site.yml's
    # own last play releases it (docs/run-lock.md).
    release = "Release the region's run lock"
    phases = [p for p in plays if p != release]
    assert plays[0].startswith("Preflight") and phases[-1] == "Phase 7 - tenants" and plays[-1] == release, plays
    assert failed == []
    stats = events[-1]["event_data"]
    assert sum(stats["changed"].values()) == 0, stats["changed"]  # a converged region: a no-op
    assert "lab-control-plane" in stats["ok"] and not stats["failures"]

    # The service clusters' kubeconfigs are the credential's injected files (preflight looks at each).
    looked = dict((e["event_data"]["host"], e["event_data"]["res"]["stat"]["path"]) for e in events
                  if e["event"] == "runner_on_ok" and e["event_data"].get("task") == "Look for the cluster's kubeconfig"
                  and e["event_data"]["role"] == "preflight")
    assert dict((h, looked[h]) for h in ("garden", "baremetal", "management-cluster")) == {
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
    # A no-op site.yml (about a minute on an idle machine): the pipe adds little to the session's own re-run.
    assert seconds < 1.5 * region.second.seconds + 30, \
        "site.yml through ansible-runner took %.0fs (no-op re-run %.0fs)" % (seconds, region.second.seconds)
