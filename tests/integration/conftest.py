"""The lab for integration tests: reused when it is already up, else started and stopped here."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "lab"))

import regionlab  # noqa: E402
from regionlab import config, kube, processes  # noqa: E402


def _lab_ports():
    clusters = config.clusters()
    ports = [config.ETCD_CLIENT_PORT, config.ETCD_PEER_PORT, config.KEYSTONE_PORT, config.KORC_HEALTH_PORT]
    return ports + [c.port for c in clusters]


@pytest.fixture(scope="session")
def lab():
    """Status of a running lab; brings it up for the session when it is not.

    Only a session that found no lab process at all stops the lab afterwards, so a lab that
    someone runs (or that is briefly restarting a server) is never taken down by a test run.
    """
    owned = not processes.running()
    if not regionlab.is_up():
        regionlab.up()
    yield regionlab.status()
    if owned:
        regionlab.down()
        assert processes.running() == [], "lab processes left after down"
        listening = [p for p in _lab_ports() if processes.port_open(p)]
        assert listening == [], "ports still listening after lab down: %s" % listening


def ansible_env(**extra):
    env = dict(os.environ)
    env.update({
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
        "ANSIBLE_NOCOLOR": "1",
        "PATH": "%s:%s" % (Path(sys.executable).parent, env.get("PATH", "")),
    })
    env.update(extra)
    return env


def run_playbook(playbook, *args, inventory=None, **env):
    """Run ansible-playbook with the JSON callback; return (rc, parsed output)."""
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory or REPO / "inventories" / "lab"),
           str(playbook)] + list(args)
    proc = subprocess.run(cmd, cwd=REPO, env=ansible_env(**env), capture_output=True, text=True, timeout=600,
                          check=False)
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("ansible-playbook printed no JSON (rc %d):\n%s\n%s"
                             % (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:]))
    return proc.returncode, out


def task_results(out, task_name):
    """{host: result} of the named task in a JSON-callback run (role tasks carry a "role : " prefix)."""
    for play in out["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"].split(" : ", 1)[-1] == task_name:
                return task["hosts"]
    raise AssertionError("task %r not in run" % task_name)


@pytest.fixture
def playbook_runner():
    return run_playbook


@pytest.fixture(scope="session")
def kubeconfigs(lab):
    return {name: c["kubeconfig"] for name, c in lab["clusters"].items()}


def run_tasks(tasks, tmp_path, hosts="management-cluster", check=False, diff=False, extra_vars=None):
    """Run tasks as one play against lab hosts; returns (rc, {task name: {host: result}})."""
    play = [{"name": "integration", "hosts": hosts, "gather_facts": False, "tasks": tasks}]
    path = tmp_path / ("play-%d.yml" % len(list(tmp_path.glob("play-*.yml"))))
    path.write_text(json.dumps(play))
    args = (["--check"] if check else []) + (["--diff"] if diff else [])
    if extra_vars:
        args += ["-e", json.dumps(extra_vars)]
    rc, out = run_playbook(path, *args)
    by_name = {}
    for played in out["plays"]:
        for task in played["tasks"]:
            by_name[task["task"]["name"]] = task["hosts"]
    return rc, by_name


def kubectl(kubeconfig, *args, stdin=None, check=True):
    """The lab's kubectl against one cluster."""
    return subprocess.run([str(config.BIN / "kubectl"), "--kubeconfig", str(kubeconfig)] + list(args), input=stdin,
                          capture_output=True, text=True, check=check, timeout=120)


def apiserver_writes(cluster_name, resource):
    """Create/update/apply requests the API server has served for a resource (apiserver_request_total).

    Dry runs are excluded, and so are deletes: the lab's namespace controller deletes the objects of
    namespaces that earlier tests removed, at any time. (The modules' own request counts cover deletes.)
    """
    cluster = [c for c in config.clusters() if c.name == cluster_name][0]
    text = kube._session(cluster).get(cluster.server + "/metrics", timeout=10).text
    total = 0
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
        if labels.get("resource") == resource and labels.get("verb") in ("POST", "PUT", "PATCH", "APPLY") \
                and not labels.get("dry_run"):
            total += int(float(line.rsplit(" ", 1)[1]))
    return total
