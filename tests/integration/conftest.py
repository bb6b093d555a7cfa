"""The lab for integration tests: reused when it is already up, else started and stopped here."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "lab"))

import regionlab  # noqa: E402
from regionlab import config, processes  # noqa: E402


def _lab_ports():
    clusters = config.clusters()
    ports = [config.ETCD_CLIENT_PORT, config.ETCD_PEER_PORT, config.KEYSTONE_PORT, config.KORC_HEALTH_PORT]
    return ports + [c.port for c in clusters]


@pytest.fixture(scope="session")
def lab():
    """Status of a running lab; brings it up for the session when it is not."""
    owned = not regionlab.is_up()
    if owned:
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
