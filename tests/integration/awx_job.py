"""A job the way AWX runs it: `ansible-runner transmit | ansible-runner worker | ansible-runner process`
(AWX -> receptor -> execution node -> AWX).

The job's private data dir is made as AWX makes it: the project (the SCM checkout: ansible.cfg, playbooks,
inventories), the inventory as AWX's SCM inventory source imported it (`ansible-inventory --list --export`
of inventories/lab, handed to the job as a script), the credentials as the custom credential types of
awx/credential_types.yml inject them (files, environment variables), the job template's extra vars.

The session's no-op re-run of site.yml (the `region` fixture) is such a job; `json_output` turns its events
into what the JSON callback prints, for the tests that judge that run.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import yaml

from regionlab import config, keystone

REPO = Path(__file__).resolve().parents[2]

BIN = Path(sys.executable).parent


class _AwxLoader(yaml.SafeLoader):
    """awx/ files mark AWX's own templates !unsafe (for Ansible); here they are plain strings."""


_AwxLoader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def awx_file(name):
    return yaml.load((REPO / "awx" / name).read_text(), Loader=_AwxLoader)


VAULT_PASSWORD = "not-a-real-vault-password"


def _project(root, tenants_dir=None):
    """The project as AWX checks it out (only what a job reads); tenants_dir: a claims directory the project
    holds as inventories/lab/tenants instead of this checkout's."""
    root.mkdir(parents=True)
    shutil.copy(REPO / "ansible.cfg", root / "ansible.cfg")
    shutil.copytree(REPO / "playbooks", root / "playbooks")
    shutil.copytree(REPO / "inventories", root / "inventories",
                    ignore=shutil.ignore_patterns(".private"))
    if tenants_dir is not None:
        claims = root / "inventories" / "lab" / "tenants"
        shutil.rmtree(claims)
        shutil.copytree(tenants_dir, claims)


def _credential_injection(worker_dir):
    """Files and environment of the credential types, as AWX renders their injectors; paths are where
    the worker unpacks the job (AWX: /runner in the execution environment)."""
    types = dict((t["name"], t) for t in awx_file("credential_types.yml")["cobaltcore_credential_types"])
    kubeconfigs = config.STATE / "kubeconfig"
    inputs = {"CobaltCore region kubeconfigs": dict(
        (field["id"], (kubeconfigs / ("%s.yaml" % field["id"].replace("_", "-"))).read_text())
        for field in types["CobaltCore region kubeconfigs"]["inputs"]["fields"]),
        "CobaltCore vault password": {"vault_password": VAULT_PASSWORD},
        "CobaltCore Keystone clouds.yaml": {"clouds_yaml": keystone.CLOUDS.read_text(), "cloud": keystone.CLOUD_NAME}}
    files, env = {}, {}
    for name, values in inputs.items():
        injectors = types[name]["injectors"]
        filenames = {}
        for key, template in injectors.get("file", {}).items():
            field = key.split(".", 1)[1]
            filenames[field] = "env/credential_%s" % field
            files[filenames[field]] = template.replace("{{ %s }}" % field, values[field])
        for var, template in injectors.get("env", {}).items():
            if "tower.filename." in template:
                field = template.split("tower.filename.", 1)[1].split("}}")[0].strip()
                env[var] = str(worker_dir / filenames[field])
            else:  # a plain field's value, "{{ <field> }}"
                env[var] = values[template.strip("{} ")]
    return files, env


def _private_data_dir(tmp_path, worker_dir, playbook, tenants_dir):
    data = tmp_path / "job"
    _project(data / "project", tenants_dir)
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
        # The execution environment holds the collection (meta/execution-environment.yml).
        "ANSIBLE_COLLECTIONS_PATH": str(REPO / ".cache" / "collections"),
        "ANSIBLE_NOCOLOR": "1",
        "PATH": "%s:%s" % (BIN, os.environ.get("PATH", "")),
    })
    if os.environ.get("COBALTCORE_LAB_PORT_BASE"):
        env["COBALTCORE_LAB_PORT_BASE"] = os.environ["COBALTCORE_LAB_PORT_BASE"]
    (data / "env" / "envvars").write_text(json.dumps(env))
    # The job template's extra vars (AWX's ALLOW_JINJA_IN_EXTRA_VARS=template lets them template).
    templates = awx_file("job_templates.yml")
    template = next(t for t in templates["cobaltcore_job_templates"] if t["playbook"] == playbook)
    assert template["extra_vars"] == "{{ cobaltcore_awx_extra_vars }}"
    (data / "env" / "extravars").write_text(json.dumps(templates["cobaltcore_awx_extra_vars"]))
    return data


IDENT = "awx-job-1"


class Job(object):
    """One finished job: the three commands' return codes, the runner's status and rc, the events in order,
    the artifacts and worker directories, the seconds it took and what `process` printed."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def json_output(self):
        return json_output(self.events)


def run(tmp_path, playbook, tenants_dir=None):
    """Run a playbook of the project (e.g. playbooks/site.yml) as an AWX job; returns its Job.
    tenants_dir: the claims directory of the project (default: this checkout's)."""
    worker_dir = tmp_path / "worker"
    data = _private_data_dir(tmp_path, worker_dir, playbook, tenants_dir)
    started = time.monotonic()
    transmit = subprocess.Popen([str(BIN / "ansible-runner"), "transmit", str(data), "-p", playbook,
                                 "--ident", IDENT], stdout=subprocess.PIPE)
    worker = subprocess.Popen([str(BIN / "ansible-runner"), "worker", "--private-data-dir", str(worker_dir)],
                              stdin=transmit.stdout, stdout=subprocess.PIPE)
    transmit.stdout.close()
    process = subprocess.run([str(BIN / "ansible-runner"), "process", str(data), "--ident", IDENT],
                             stdin=worker.stdout, capture_output=True, text=True, timeout=900, check=False)
    worker.wait(timeout=60)
    transmit.wait(timeout=60)
    seconds = time.monotonic() - started
    artifacts = data / "artifacts" / IDENT
    status = (artifacts / "status").read_text() if (artifacts / "status").exists() else None
    rc = (artifacts / "rc").read_text() if (artifacts / "rc").exists() else None
    events = sorted((json.loads(p.read_text()) for p in (artifacts / "job_events").glob("*.json")),
                    key=lambda event: event["counter"])
    return Job(returncodes=(transmit.returncode, worker.returncode, process.returncode), status=status, rc=rc,
               events=events, artifacts=artifacts, worker_dir=worker_dir, seconds=seconds,
               stdout=process.stdout, stderr=process.stderr)


RESULTS = {"runner_on_ok": {}, "runner_on_failed": {"failed": True}, "runner_on_skipped": {"skipped": True},
           "runner_on_unreachable": {"unreachable": True}}


def json_output(events):
    """The ansible.posix.json callback's document from a job's events: plays with their start and end, tasks
    with each host's result, and the stats by host."""
    plays, stats = [], {}
    tasks = {}
    for event in events:
        data = event.get("event_data") or {}
        kind = event["event"]
        if kind == "playbook_on_play_start":
            plays.append({"play": {"name": data.get("play"), "id": data.get("play_uuid"),
                                   "duration": {"start": event["created"], "end": event["created"]}}, "tasks": []})
        elif kind == "playbook_on_task_start" and plays:
            task = {"task": {"name": data.get("name") or data.get("task"), "id": data.get("task_uuid"),
                             "duration": {"start": event["created"], "end": event["created"]}}, "hosts": {}}
            plays[-1]["tasks"].append(task)
            tasks[data.get("task_uuid")] = task
        elif kind in RESULTS and data.get("task_uuid") in tasks:
            result = dict(data.get("res") or {}, **RESULTS[kind])
            if kind == "runner_on_ok" and not data.get("res"):
                result["res_dropped"] = True  # above MAX_EVENT_RES (AWX's limit too): its fields are gone
            result.setdefault("changed", False)
            tasks[data["task_uuid"]]["hosts"][data["host"]] = result
            tasks[data["task_uuid"]]["task"]["duration"]["end"] = event["created"]
        elif kind == "playbook_on_stats":
            for key, name in (("ok", "ok"), ("changed", "changed"), ("failures", "failures"), ("skipped", "skipped"),
                              ("dark", "unreachable"), ("rescued", "rescued"), ("ignored", "ignored")):
                for host, count in (data.get(key) or {}).items():
                    stats.setdefault(host, {}).setdefault(name, 0)
                    stats[host][name] += count
            for host in data.get("processed") or {}:
                stats.setdefault(host, {})
            for counts in stats.values():
                for name in ("ok", "changed", "failures", "skipped", "unreachable", "rescued", "ignored"):
                    counts.setdefault(name, 0)
        if plays and kind != "playbook_on_stats":
            plays[-1]["play"]["duration"]["end"] = event["created"]
    spans = [play["play"]["duration"] for play in plays] + [
        task["task"]["duration"] for play in plays for task in play["tasks"]]
    for span in spans:
        for key in ("start", "end"):
            # The events' times are UTC without a zone; the callback's end with a Z.
            stamp = datetime.fromisoformat(span[key])
            span[key] = stamp.isoformat() + ("" if stamp.tzinfo else "Z")
    return {"plays": plays, "stats": stats}
