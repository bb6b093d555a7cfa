"""The lab for integration tests (reused when it is already up, else started and stopped here) and the
region converged on it once per session (the `region` fixture) for every test that only reads it."""

import base64
import contextlib
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
import requests
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "lab"))

import regionlab  # noqa: E402
from regionlab import config, kube, processes  # noqa: E402

import api_reads  # noqa: E402
import awx_job  # noqa: E402


# lab_only: a test that needs only the lab (no converged region) and touches only objects of its own, none
# that the region's tests count or the molecule scenarios read. `make test` runs these beside molecule's
# scenarios (tests/suite.sh, split by STANDINS_MARK and BESIDE_DEFAULT_MARK); `make integration` runs every test in
# one session.
LAB_ONLY = "lab_only"
# standins: a lab-only test that writes the lab's standins.yaml (delays, injected failures). molecule's other
# scenarios write it too (they inject faults), so `make test` runs these beside `default` and the other lab-only
# tests beside the other scenarios.
STANDINS_MARK = "standins"
# beside_default: a lab-only test that writes no standins.yaml but runs beside `default` all the same, so that
# the two halves take about as long as their scenarios (the other scenarios take longer than `default`).
BESIDE_DEFAULT_MARK = "beside_default"


def pytest_configure(config):
    config.addinivalue_line("markers", LAB_ONLY + ": needs only the lab and touches only objects of its own")
    config.addinivalue_line("markers", STANDINS_MARK + ": writes the lab's standins.yaml (never beside a scenario "
                                                       "that injects faults)")
    config.addinivalue_line("markers", BESIDE_DEFAULT_MARK + ": runs beside molecule's default scenario in make test "
                                                             "(balances the halves of the lab-only tests)")


@functools.lru_cache(maxsize=None)
def _writes_standins(path):
    """Whether a test file touches the stand-ins' settings file (by its name in the lab's config or on disk)."""
    text = Path(path).read_text()
    return any(sign in text for sign in ("STANDINS", "standins.yaml", "standins_restored", "update_standins"))


def pytest_collection_modifyitems(items):
    wrong = [item.nodeid for item in items if item.get_closest_marker(LAB_ONLY) and "region" in item.fixturenames]
    if wrong:
        raise pytest.UsageError("marked %s but using the region fixture: %s" % (LAB_ONLY, ", ".join(wrong)))
    unmarked = sorted(set(str(item.path) for item in items if item.get_closest_marker(LAB_ONLY)
                          and not item.get_closest_marker(STANDINS_MARK) and _writes_standins(item.path)))
    if unmarked:
        raise pytest.UsageError("marked %s and touching standins.yaml but not marked %s: %s"
                                % (LAB_ONLY, STANDINS_MARK, ", ".join(unmarked)))


_FILE_SECONDS = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


# Playbook runs of the session (run_playbook, finish_verbose): their seconds, and each task's, by task name.
_PLAYBOOK_SECONDS = {}
_TASK_SECONDS = {}


def callback_seconds(entry):
    """Seconds of a JSON-callback play or task (its `duration`), or None when it has no end."""
    duration = entry.get("duration") or {}
    if not (duration.get("start") and duration.get("end")):
        return None
    # The callback writes UTC with a Z (Python 3.11 reads it).
    return (datetime.fromisoformat(duration["end"]) - datetime.fromisoformat(duration["start"])).total_seconds()


def _playbook_label(playbook, args):
    """A run's line in the summary: the playbook's file (a test's own play: where it lives) and --check."""
    path = Path(playbook)
    name = path.name if path.parent in (REPO / "playbooks", REPO / "tests" / "integration" / "playbooks") \
        else "a test's own play"
    return name + (" --check" if "--check" in args else "")


def _count_playbook_run(out, seconds, label):
    count, total = _PLAYBOOK_SECONDS.get(label, (0, 0.0))
    _PLAYBOOK_SECONDS[label] = (count + 1, total + seconds)
    for play in out.get("plays", []):
        for task in play.get("tasks", []):
            took = callback_seconds(task["task"])
            if took is not None:
                count, total = _TASK_SECONDS.get(task["task"]["name"], (0, 0.0))
                _TASK_SECONDS[task["task"]["name"]] = (count + 1, total + took)


def pytest_terminal_summary(terminalreporter):
    """Seconds by test file (setup, call and teardown; the region fixture counts for the first file using it),
    by playbook and by playbook task (summed over the session's runs): what the suite budget is spent on."""
    terminalreporter.write_sep("=", "seconds by file")
    for name, seconds in sorted(_FILE_SECONDS.items(), key=lambda item: -item[1]):
        terminalreporter.write_line("%7.1fs %s" % (seconds, name))
    if _PLAYBOOK_SECONDS:
        runs, total = (sum(column) for column in zip(*_PLAYBOOK_SECONDS.values()))
        terminalreporter.write_sep("=", "seconds by playbook (%d runs, %.1fs in all)" % (runs, total))
        for name, (count, seconds) in sorted(_PLAYBOOK_SECONDS.items(), key=lambda item: -item[1][1]):
            terminalreporter.write_line("%7.1fs %4d× %s" % (seconds, count, name))
        terminalreporter.write_sep("=", "seconds by playbook task (summed over those runs)")
        for name, (count, seconds) in sorted(_TASK_SECONDS.items(), key=lambda item: -item[1][1])[:25]:
            terminalreporter.write_line("%7.1fs %4d× %s" % (seconds, count, name[:150]))


def _lab_ports():
    clusters = config.clusters()
    ports = [config.ETCD_CLIENT_PORT, config.ETCD_PEER_PORT, config.KEYSTONE_PORT, config.KORC_HEALTH_PORT,
             config.CHARTS_PORT]
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
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=ansible_env(**env), capture_output=True, text=True, timeout=600,
                          check=False)
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("ansible-playbook printed no JSON (rc %d):\n%s\n%s"
                             % (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:]))
    _count_playbook_run(out, time.monotonic() - started, _playbook_label(playbook, args))
    return proc.returncode, out


def task_results(out, task_name):
    """{host: result} of the named task in a JSON-callback run (role tasks carry a "role : " prefix)."""
    for play in out["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"].split(" : ", 1)[-1] == task_name:
                return task["hosts"]
    raise AssertionError("task %r not in run" % task_name)


def task_result(out, prefix):
    """The one host's result of the task whose name starts with prefix (a name that carries values)."""
    for play in out["plays"]:
        for task in play["tasks"]:
            if task["task"]["name"].startswith(prefix):
                (result,) = task["hosts"].values()
                return result
    raise AssertionError("no task %r in the run: %s" % (prefix, out.get("stats")))


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
    """The lab's kubectl against one cluster; with check, a failure raises with kubectl's own message."""
    proc = subprocess.run([str(config.BIN / "kubectl"), "--kubeconfig", str(kubeconfig)] + list(args), input=stdin,
                          capture_output=True, text=True, check=False, timeout=120)
    if check and proc.returncode:
        raise AssertionError("kubectl %s exited %d: %s" % (" ".join(args), proc.returncode, proc.stderr.strip()))
    return proc


def apiserver_writes(cluster_name, resource):
    """Create/update/apply requests the API server has served for a resource (apiserver_request_total).

    Dry runs are excluded, and so are deletes: the lab's namespace controller deletes the objects of
    namespaces that earlier tests removed, at any time. (The modules' own request counts cover deletes.)
    """
    cluster = config.cluster(cluster_name)
    text = kube._session(cluster).get(cluster.server + "/metrics", timeout=10).text
    total = 0
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
        if labels.get("resource") == resource and labels.get("verb") in ("POST", "PUT", "PATCH", "APPLY") \
                and not labels.get("dry_run") and labels.get("subresource") != "status":
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


# ---------------------------------------------------------------------------
# The region: playbooks/site.yml converged once per session, from an empty region.

SITE = REPO / "playbooks" / "site.yml"
PROJECT_NAMESPACE = "garden-cobaltcore"
CLAIMS_NAMESPACE = "cobaltcore-servers"
REGION_HOST = "lab-control-plane"
REGION_NAMESPACE = "openstack"
PRIVATE = config.STATE / "private" / "kubeconfig"
# Writes the collection makes in phases 1-3, by cluster and resource (status updates are the stand-ins').
WRITTEN = {"baremetal": ["bmcs", "bmcsecrets", "serverclaims", "secrets", "namespaces"], "garden": ["shoots"]}
# and in phase 3, on every cluster that runs Flux (status updates are Flux's own).
WRITTEN.update((c.name, ["helmreleases", "helmrepositories"]) for c in config.clusters()
               if set(c.groups) & {"management", "control_plane", "hypervisor_pools", "storage_pools"})
KORC_KINDS = {"Domain": 1, "Project": 2, "Role": 4, "Service": 6, "Endpoint": 12, "User": 5,
              "ApplicationCredential": 5}
KORC_RESOURCES = ",".join("%ss.openstack.k-orc.cloud" % kind.lower() for kind in KORC_KINDS)
# The tenants site.yml builds: the lab's claims (inventories/lab/tenants) and two written for the tests,
# lab-tenant-q with Manila on a CephFS and an object store, lab-tenant-r with volumes on both storage pools.
LAB_TENANTS_DIR = REPO / "inventories" / "lab" / "tenants"
TENANT_Q, TENANT_R = "lab-tenant-q", "lab-tenant-r"


def tenant_claim(name, pools=("st-pool-a",), quota=None, files=False):
    """An OpenStackCluster claim of the lab region; files: Manila on a CephFS, and an object store."""
    spec = {"region": "lab", "size": "small", "hypervisorClusters": ["hv-pool-a"], "storageClusters": list(pools)}
    ceph = spec.setdefault("storage", {}).setdefault("ceph", {})
    if quota is not None:
        ceph["volumePool"] = {"quotaGB": quota}
    if files:
        spec["services"] = {"manila": True}
        ceph.update(filesystem={"enabled": True}, objectStore={"enabled": True})
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "OpenStackCluster",
            "metadata": {"name": name, "namespace": "tenant-" + name}, "spec": spec}


TEST_CLAIMS = {TENANT_Q: tenant_claim(TENANT_Q, files=True),
               TENANT_R: tenant_claim(TENANT_R, pools=("st-pool-b", "st-pool-a"))}


def write_claims(directory, claims):
    """Each claim as <name>.yaml in a tenants directory."""
    for claim in claims:
        (directory / ("%s.yaml" % claim["metadata"]["name"])).write_text(yaml.safe_dump(claim))


# Short stand-in delays for the region's session, its build and every test after it (the lab's defaults are
# a few times longer; the lab-only sessions and molecule's scenarios run with them). A test that writes
# standins.yaml puts back what it found.
QUICK_DELAYS = {"discovery": 0.2, "shoot_step": 0.1, "keystone": 0.3, "control_plane": 0.3,
                "mariadb": 1.0, "rabbitmq": 0.6, "valkey": 0.5, "memcached": 0.3, "service": 0.3, "hypervisor": 0.2,
                "rook": 0.2}


def lab_kubectl(cluster, *args, check=True):
    """kubectl with the lab's own admin kubeconfig of a cluster."""
    return kubectl(config.STATE / "kubeconfig" / ("%s.yaml" % cluster), *args, check=check)


def read_json(kubeconfig, *args, missing_ok=True):
    """`kubectl get ... -o json` with a kubeconfig, parsed; None when the API server says NotFound (with missing_ok).

    Retried a few times, as any client retries a busy API server (a loaded machine makes the lab's answer
    with 429/503 or time out now and then); the last error is raised: a busy API server must not read as
    an absent object. With a lab cluster's own kubeconfig the read goes over a kept-alive connection
    (api_reads) where that answers the arguments, else through kubectl."""
    path = Path(kubeconfig)
    direct = path.parent == config.STATE / "kubeconfig"
    for attempt in range(4):
        if direct:
            try:
                found = api_reads.reader(path.stem).get(args)
            except api_reads.Unsupported:
                direct = False
            except api_reads.Busy as ex:
                error = str(ex)
            else:
                if found is not api_reads.NOT_FOUND:
                    return found
                if missing_ok:
                    return None
                error = "NotFound"
        if not direct:
            proc = kubectl(kubeconfig, "get", *args, "-o", "json", check=False)
            if proc.returncode == 0:
                return json.loads(proc.stdout)
            if missing_ok and "(NotFound)" in proc.stderr:
                return None
            error = proc.stderr.strip()
        if attempt == 3:
            raise AssertionError("kubectl get %s: %s" % (" ".join(args), error))
        time.sleep(1 + 2 * attempt)
    raise AssertionError("unreachable")


def get_object(cluster, *args, missing_ok=True):
    """read_json with the lab's own admin kubeconfig of a cluster."""
    return read_json(config.STATE / "kubeconfig" / ("%s.yaml" % cluster), *args, missing_ok=missing_ok)


def objects(cluster, resource, namespace=None):
    """The items of a LIST (get_object's retries; a NotFound is an error too)."""
    return get_object(cluster, resource, *(["-n", namespace] if namespace else []), missing_ok=False)["items"]


def writes():
    """{(cluster, resource): writes} for what phases 1-2 write."""
    return dict(((cluster, resource), apiserver_writes(cluster, resource))
                for cluster, resources in WRITTEN.items() for resource in resources)


class ControlPlaneApi:
    """Admin requests to the lab's control-plane API server, for the stand-in tests."""

    def __init__(self):
        cluster = next(c for c in config.clusters() if config.CONTROL_PLANE_GROUP in c.groups)
        self.base = cluster.server
        self.session = requests.Session()
        self.session.trust_env = False
        self.session.verify = str(cluster.pki / "ca.crt")
        self.session.cert = (str(cluster.pki / "admin.crt"), str(cluster.pki / "admin.key"))

    def call(self, method, url, body=None, content_type="application/json", params=None):
        resp = self.session.request(method, self.base + url, data=json.dumps(body) if body is not None else None,
                                    headers={"Content-Type": content_type}, params=params, timeout=20)
        try:
            return resp.status_code, resp.json()
        except ValueError:
            return resp.status_code, resp.text

    def get(self, url):
        code, body = self.call("GET", url)
        return body if code == 200 else None

    def ok(self, method, url, body=None, content_type="application/json", params=None):
        code, out = self.call(method, url, body, content_type, params)
        assert code < 300, "%s %s: %s %s" % (method, url, code, out)
        return out


@contextlib.contextmanager
def standins_restored():
    """The lab's standins.yaml as it was (its bytes, or None when absent) when the block began; the block's end,
    however it ends, writes it back (or removes the file)."""
    saved = config.STANDINS.read_bytes() if config.STANDINS.exists() else None
    try:
        yield saved
    finally:
        if saved is None:
            config.STANDINS.unlink(missing_ok=True)
        else:
            config.STANDINS.write_bytes(saved)


def update_standins(update):
    """update(data) applied to the lab's standins.yaml as it is now ({} when absent), written back."""
    data = yaml.safe_load(config.STANDINS.read_text()) if config.STANDINS.exists() else None
    data = data if isinstance(data, dict) else {}
    update(data)
    config.STANDINS.write_text(yaml.safe_dump(data))


def wait_truthy(check, what, timeout=60.0, interval=0.25):
    """check()'s first truthy result; fails after timeout seconds naming what and the last result."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError("timed out after %ss waiting for %s (last: %r)" % (timeout, what, last))


def wait_until(check, timeout, what):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.5)


def delete_namespace(kubeconfig, namespace, timeout=600, on_wait=None):
    """Delete a namespace and wait until it is gone; False when it is still there at the timeout.
    on_wait: called every 10 s while it terminates."""
    kubectl(kubeconfig, "delete", "namespace", namespace, "--ignore-not-found", "--wait=false")
    return wait_namespace_gone(kubeconfig, namespace, timeout, on_wait)


def wait_namespace_gone(kubeconfig, namespace, timeout=600, on_wait=None):
    """delete_namespace's wait, for a namespace whose deletion has been asked for."""
    started = time.time()
    called = started
    interval = 0.25  # an empty namespace goes in a few seconds; one with finalizers takes longer
    while time.time() < started + timeout:
        if read_json(kubeconfig, "namespace", namespace) is None:
            return True
        if on_wait and time.time() - called >= 10:
            on_wait()
            called = time.time()
        time.sleep(interval)
        interval = min(interval * 2, 2)
    return False


def remove_openstack_cluster(kubeconfig, namespace):
    """An OpenStack cluster with its own Keystone: its Keystone goes with it, so K-ORC need not clean up.

    K-ORC's finalizers are taken off its objects and off the Secrets it guards (application
    credentials), again while the namespace terminates: a K-ORC that is not running (a lab restarted
    before its chart's Deployment is seen) would otherwise hold the namespace for ever."""
    return remove_openstack_clusters(kubeconfig, [namespace])


def remove_openstack_clusters(kubeconfig, namespaces):
    """remove_openstack_cluster for several namespaces that terminate side by side; True when all are gone.

    One client for the lot: K-ORC's objects and the Secrets it guards are read with one LIST per kind across
    namespaces and their finalizers taken off before the namespaces are deleted, and again while they terminate."""
    from regionlab.standins.client import Kube, path
    client = Kube(config.cluster(Path(kubeconfig).stem), "c5c3-tests")
    wanted = set(namespaces)

    def release():
        guarded = [("v1", "secrets")] + [("openstack.k-orc.cloud/v1alpha1", "%ss" % kind.lower()) for kind in KORC_KINDS]
        for api_version, plural in guarded:
            for obj in client.list(path(api_version, plural)):
                meta = obj["metadata"]
                finalizers = meta.get("finalizers") or []
                if meta.get("namespace") in wanted and any(f.startswith("openstack.k-orc.cloud/") for f in finalizers):
                    client.patch(path(api_version, plural, meta["namespace"], meta["name"]), obj,
                                 {"metadata": {"finalizers": [f for f in finalizers
                                                              if not f.startswith("openstack.k-orc.cloud/")]}})
    release()
    for namespace in namespaces:
        client.delete(path("v1", "namespaces", name=namespace))
    started = time.time()
    released = started
    while time.time() < started + 600:
        left = [n for n in namespaces if client.get(path("v1", "namespaces", name=n)) is not None]
        if not left:
            return True
        wanted = set(left)
        if time.time() - released >= 10:
            release()
            released = time.time()
        time.sleep(1)
    return False


def empty_region():
    """Remove what site.yml creates, as on a lab that was never driven: the Shoots, BMCs and claims of
    phases 1-2 (with the Shoots their clusters' content), the fetched kubeconfigs, phase 3 on the
    management cluster, and the region's OpenStack cluster (phases 4-5)."""
    for shoot in objects("garden", "shoots", PROJECT_NAMESPACE):
        name = shoot["metadata"]["name"]
        lab_kubectl("garden", "-n", PROJECT_NAMESPACE, "annotate", "--overwrite", "shoot", name,
                    "confirmation.gardener.cloud/deletion=true")
        lab_kubectl("garden", "-n", PROJECT_NAMESPACE, "delete", "shoot", name, "--wait=false")
    # Phase 3 on the management cluster (a Shoot's cluster is emptied when its Shoot goes): helm-controller
    # uninstalls what it installed.
    lab_kubectl("management-cluster", "delete", "helmreleases.helm.toolkit.fluxcd.io,helmrepositories.source.toolkit.fluxcd.io",
                "-A", "-l", "app.kubernetes.io/managed-by=c5c3.cobaltcore", "--wait=true", "--timeout=300s")
    lab_kubectl("baremetal", "delete", "namespace", CLAIMS_NAMESPACE, "--ignore-not-found", "--wait=false")
    lab_kubectl("baremetal", "delete", "bmcs", "--all", "--wait=false")
    lab_kubectl("baremetal", "delete", "bmcsecrets", "--all", "--wait=false")
    assert remove_openstack_cluster(config.STATE / "kubeconfig" / ("%s.yaml" % REGION_HOST), REGION_NAMESPACE)
    # The gardenlet stand-in empties one deleted Shoot's cluster per pass: five Shoots, a storage pool's Ceph
    # among them, take up to a minute and a half.
    wait_until(lambda: not objects("garden", "shoots", PROJECT_NAMESPACE), 180, "Shoots gone")
    wait_until(lambda: not objects("baremetal", "servers") and not objects("baremetal", "bmcs"), 60, "Servers gone")
    wait_until(lambda: get_object("baremetal", "namespace", CLAIMS_NAMESPACE) is None,
               60, "claims namespace gone")
    shutil.rmtree(PRIVATE, ignore_errors=True)
    # A run lock an earlier run left held (one whose controller process was not ansible-playbook, so its own release
    # did not match it) would read as the build's.
    lab_kubectl("management-cluster", "-n", "kube-system", "delete", "lease", RUN_LOCK, "--ignore-not-found")


def failures(out):
    """(task, host, msg) of every failed task of a JSON-callback run."""
    return [(t["task"]["name"], host, r.get("msg")) for p in out["plays"] for t in p["tasks"]
            for host, r in t["hosts"].items() if r.get("failed")]


def _children():
    """{pid: [child pids]} of every live process."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path("/proc/%s/stat" % entry).read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            found.setdefault(ppid, []).append(int(entry))
    return found


def kill_run(proc):
    """SIGKILL a started ansible-playbook and everything it started, as a killed AWX job's pod goes: Ansible's workers
    run in sessions of their own (WorkerProcess._detach calls setsid), so killing the playbook's process group alone
    leaves them, and the modules they run, going on. Stopped first (SIGSTOP), so that none starts another meanwhile."""
    stopped = set()
    while True:
        children, tree, todo = _children(), set(), [proc.pid]
        while todo:
            pid = todo.pop()
            if pid not in tree:
                tree.add(pid)
                todo.extend(children.get(pid, []))
        if tree <= stopped:
            break
        for pid in tree - stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        stopped |= tree
    for pid in stopped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return proc.communicate()


def start_verbose(playbook, *args, inventory=None):
    """A started ansible-playbook -vvv with the JSON callback (finish_verbose reads it)."""
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(inventory or REPO / "inventories" / "lab"),
           str(playbook), "-vvv"] + list(args)
    proc = subprocess.Popen(cmd, cwd=REPO, env=ansible_env(COBALTCORE_LAB_DIR=str(config.STATE)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.started = time.monotonic()
    proc.label = _playbook_label(playbook, args)
    return proc


def finish_verbose(proc):
    """(rc, parsed JSON, whole stdout + stderr) of a start_verbose run."""
    stdout, stderr = proc.communicate(timeout=1200)
    lines = stdout.splitlines()
    if "{" not in lines:
        raise AssertionError("ansible-playbook printed no JSON (rc %d):\n%s\n%s"
                             % (proc.returncode, stdout[-3000:], stderr[-3000:]))
    out = json.loads("\n".join(lines[lines.index("{"):]))
    _count_playbook_run(out, time.monotonic() - proc.started, proc.label)
    return proc.returncode, out, stdout + stderr


# A line ansible-core shows only from -vvv on (InventoryManager: "Parsed <source> inventory source with <plugin> plugin").
VVV_LINE = " inventory source with "


def run_verbose(playbook, *args, inventory=None):
    """ansible-playbook -vvv with the JSON callback: (rc, parsed JSON, whole stdout + stderr)."""
    return finish_verbose(start_verbose(playbook, *args, inventory=inventory))


RUN_LOCK = "cobaltcore-run-lab"  # the lab region's Lease (docs/run-lock.md)


def run_lock():
    """The region run lock's Lease on the management cluster, or None."""
    return get_object("management-cluster", "-n", "kube-system", "lease", RUN_LOCK)


def run_lock_holder():
    return ((run_lock() or {}).get("spec") or {}).get("holderIdentity")


def kubeconfig_secrets():
    """The client keys and certificates of the fetched kubeconfigs, whole and line by line."""
    found = []
    for path in PRIVATE.glob("*.yaml"):
        user = yaml.safe_load(path.read_text())["users"][0]["user"]
        for key in ("client-key-data", "client-certificate-data"):
            found.append(user[key])
            found.extend(line for line in base64.b64decode(user[key]).decode().splitlines()
                         if len(line) > 40 and "-----" not in line)
    return found


def secrets_of(kubeconfig, namespace):
    """{name: decoded data} of every Secret of a namespace."""
    items = json.loads(kubectl(kubeconfig, "-n", namespace, "get", "secrets", "-o", "json").stdout)["items"]
    return dict((item["metadata"]["name"], dict((k, base64.b64decode(v).decode())
                                                for k, v in (item.get("data") or {}).items())) for item in items)


def korc_ids(kubeconfig, namespace=REGION_NAMESPACE):
    """{(kind, name): Keystone ID} of the K-ORC objects of an OpenStack cluster."""
    items = json.loads(kubectl(kubeconfig, "-n", namespace, "get", KORC_RESOURCES, "-o", "json").stdout)["items"]
    return dict(((o["kind"], o["metadata"]["name"]), (o.get("status") or {}).get("id")) for o in items)


def keystone_endpoint(kubeconfig, namespace=REGION_NAMESPACE):
    """The endpoint of an OpenStack cluster's own Keystone (its Keystone CR's status)."""
    return kubectl(kubeconfig, "-n", namespace, "get", "keystone", "keystone", "-o",
                   "jsonpath={.status.endpoint}").stdout


def keystone_admin(kubeconfig, namespace=REGION_NAMESPACE):
    """The bootstrap admin of an OpenStack cluster's own Keystone (password from its Secret), authorized."""
    import openstack
    from regionlab import keystone as lab_keystone
    conn = openstack.connect(load_yaml_config=False, auth_type="password", auth={
        "auth_url": keystone_endpoint(kubeconfig, namespace), "username": "admin", "project_name": "admin",
        "user_domain_name": "Default", "project_domain_name": "Default",
        "password": secret_data(kubeconfig, "keystone-admin-credentials", namespace)["password"]},
        # status.endpoint is the internal URL; the public one is where users reach the region (not the lab).
        region_name=lab_keystone.REGION, interface="internal")
    conn.authorize()
    return conn


def token_status(auth_url, clouds_yaml, cloud):
    """HTTP status of a token request with the application credential of a clouds.yaml at auth_url."""
    auth = yaml.safe_load(clouds_yaml)["clouds"][cloud]["auth"]
    body = {"auth": {"identity": {"methods": ["application_credential"], "application_credential": {
        "id": auth["application_credential_id"], "secret": auth["application_credential_secret"]}}}}
    request = urllib.request.Request(auth_url + "/auth/tokens", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def secret_data(kubeconfig, name, namespace=REGION_NAMESPACE):
    """The decoded data of a Secret, None when the API server says it does not exist (read_json's retries)."""
    secret = read_json(kubeconfig, "-n", namespace, "secret", name)
    if secret is None:
        return None
    return dict((k, base64.b64decode(v).decode()) for k, v in (secret.get("data") or {}).items())


class Run(object):
    """One ansible-playbook run: rc, JSON output, seconds; text for -vvv runs; what was seen around it."""

    def __init__(self, rc, out, seconds, text=None, **seen):
        self.rc, self.out, self.seconds, self.text = rc, out, seconds, text
        self.seen = seen

    def failures(self):
        return failures(self.out)


def lab_log_tails(since, lines=12):
    """The last lines of each lab process log written since `since` (time.monotonic()): what a failed build's
    message carries, as CI keeps nothing else of the lab."""
    began = time.time() - (time.monotonic() - since)
    tails = []
    for path in sorted((config.STATE / "logs").glob("*.log")):
        if path.stat().st_mtime < began or path.name.startswith(("apiserver-", "controller-manager-", "etcd")):
            continue
        with path.open("rb") as handle:
            handle.seek(max(0, path.stat().st_size - 4096))
            text = handle.read().decode("utf-8", "replace").splitlines()[-lines:]
        tails.append("--- %s\n%s" % (path.name, "\n".join(line[:300] for line in text)))
    return "\n".join(tails)


class Region(object):
    """The region as the session built it: `check` (site.yml --check --diff on the empty region), `first`
    (the -vvv run that built it, with the fetched kubeconfigs' keys and the Secrets of the region's OpenStack
    cluster it left), `second` (an AWX job started with the build, waiting for its run lock, then a no-op re-run),
    with the API server writes of phases 1-2 around each and, around the second, the K-ORC IDs and K-ORC's
    clouds.yaml Secret. tenants_dir holds the claims of the region's tenants: the lab's and TEST_CLAIMS."""

    def __init__(self, check, first, second, tenants_dir):
        self.check, self.first, self.second = check, first, second
        self.tenants_dir = tenants_dir


def play_seconds(out):
    """[(play name, seconds)] of a JSON-callback run, in order (a phase's plays share its name prefix)."""
    result = []
    for play in out.get("plays", []):
        seconds = callback_seconds(play["play"])
        if seconds is not None:
            result.append((play["play"]["name"], seconds))
    return result


def _play(playbook, *args):
    started = time.monotonic()
    rc, out = run_playbook(playbook, *args, COBALTCORE_LAB_DIR=str(config.STATE))
    return rc, out, time.monotonic() - started


@pytest.fixture(scope="session")
def region(lab, tmp_path_factory):
    """playbooks/site.yml converged once for the session, from an empty region.

    Tests that only read the region use this fixture; a test that changes it works on its own objects
    (a namespace, a copy of the inventory) or restores what it changed. The runs are kept for the tests
    that judge them (check mode on an empty region, the first build, the no-op re-run).
    """
    control_plane = config.STATE / "kubeconfig" / ("%s.yaml" % REGION_HOST)
    tenants_dir = tmp_path_factory.mktemp("region-tenants")
    for path in LAB_TENANTS_DIR.glob("*.yaml"):
        shutil.copy(path, tenants_dir)
    write_claims(tenants_dir, TEST_CLAIMS.values())
    tenants = ("-e", "cobaltcore_tenants_dir=%s" % tenants_dir)
    # The short delays end with the session, or with a build that failed.
    with standins_restored():
        update_standins(lambda data: data.update(delays=dict(data.get("delays") or {}, **QUICK_DELAYS)))
        time.sleep(1)  # the stand-ins re-read the file when it changes
        empty_region()
        before = writes()
        rc, out, seconds = _play(SITE, "--check", "--diff", *tenants)
        check = Run(rc, out, seconds, writes_before=before, writes_after=writes(), private_exists=PRIVATE.exists(),
                    shoots=objects("garden", "shoots", PROJECT_NAMESPACE), bmcs=objects("baremetal", "bmcs"))
        started = time.monotonic()
        build = start_verbose(SITE, *tenants)
        # Two site.yml runs of a fresh region at once: the second, an AWX job (awx_job.py), starts once the build
        # holds the region's run lock, waits for it and then re-runs the region: the session's no-op re-run.
        # test_awx_runner.py judges the job, the others its output.
        build_holder = wait_truthy(run_lock_holder, "the first build to take the region's run lock", timeout=300)
        jobs = {}
        job_started = time.monotonic()
        # The job's project holds the same claims, as the project's SCM checkout would.
        awx = threading.Thread(target=lambda: jobs.update(job=awx_job.run(tmp_path_factory.mktemp("awx-site"),
                                                                          "playbooks/site.yml", tenants_dir)))
        awx.start()
        try:
            rc, out, text = finish_verbose(build)
            job_waited = time.monotonic() - job_started
            first = Run(rc, out, time.monotonic() - started, text=text, kubeconfig_secrets=kubeconfig_secrets(),
                        secrets=secrets_of(control_plane, REGION_NAMESPACE))
            assert rc == 0, "site.yml did not build the region: %s\n%s" % (first.failures(), lab_log_tails(started))
            # At once: the job takes the lock within its 2 s poll and writes nothing before phase 1.
            before = dict(writes=writes(), korc_ids=korc_ids(control_plane),
                          korc_secret=secret_data(control_plane, "k-orc-clouds-yaml"))
        finally:
            awx.join(timeout=1800)
        job = jobs["job"]
        after = dict(writes=writes(), korc_ids=korc_ids(control_plane),
                     korc_secret=secret_data(control_plane, "k-orc-clouds-yaml"))
        second = Run(0 if job.rc == "0" else 1, job.json_output(), job.seconds, before=before, after=after, job=job,
                     build_holder=build_holder, waited=job_waited)
        print("\nregion: site.yml --check on the empty region %.1fs, first build (-vvv) %.1fs, no-op re-run "
              "(AWX job started with the build) %.1fs in all, %.1fs of it after the build"
              % (check.seconds, first.seconds, second.seconds, second.seconds - second.seen["waited"]))
        for label, run in (("first build", first), ("no-op re-run", second)):
            print("region %s by play: %s" % (label, "; ".join("%s %.1fs" % item for item in play_seconds(run.out))))
        # tests/suite.sh starts the static checks now: beside the build they cost it ~45 s of its CPU.
        built = os.environ.get("COBALTCORE_REGION_BUILT_FILE")
        if built:
            Path(built).touch()
        yield Region(check, first, second, tenants_dir)
        # Every test that changed standins.yaml put it back (standins_restored): the region's quick delays are there.
        left = yaml.safe_load(config.STANDINS.read_text()) if config.STANDINS.exists() else None
        assert isinstance(left, dict) and dict(left.get("delays") or {}, **QUICK_DELAYS) == left.get("delays"), \
            "a test left standins.yaml without the region's delays: %r" % (left,)
