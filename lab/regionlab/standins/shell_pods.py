"""The lab's kubelet for pods whose container is a shell script: the collection's OVN database Jobs (ovn_database) and
its Ceph Jobs on the storage pools (storage_maintenance).

No container runs in the lab. A pod annotated lab.c5c3.io/played-by: shell-pods (the lab inventory's
cobaltcore_ovn_backup.pod_annotations) is left alone by KWOK's pod-complete Stage (kubelets.py); once KWOK has it
Running, this module runs its container here, as the container would run it:

- the command must be a shell with its script (["/bin/sh", "-ec", <script>]); the script runs with the real tools
  of this machine (ovsdb-client of Debian's Open vSwitch);
- the container's env: literal values and the downward API's metadata fields (valueFrom.fieldRef: metadata.name,
  .namespace, .uid, .labels['<key>'], .annotations['<key>'], spec.nodeName) and the keys of the pod's cluster's
  Secrets and ConfigMaps (secretKeyRef, configMapKeyRef), as the kubelet resolves them; with what a
  pod sees resolved to the lab: an OVSDB remote of an OVN database Service
  (tcp:ovn-nb.ovn-system.svc[.cluster.local]:6641) becomes the lab's members of that database (ovn.py), and a value
  under a volume mount's path the lab directory of that volume (STATE/volumes/: nfs/<server>/<path>,
  pvc/<namespace>/<claim>, host/<path>); any other volume cannot be mounted here and fails the container;
- then the exit, as kubelets.exit_patch writes it: code 0 completes the pod, any other fails it with the end of
  what the script wrote to stderr.

Each script runs in a thread beside the loop's passes, at most SCRIPT_TIMEOUT seconds.
"""

import base64
import json
import os
import re
import subprocess
import threading

from .. import config, kubelets
from .. import ovn as data_plane
from .client import ApiError, object_path, path

PLAYER = "shell-pods"
SHELLS = ("/bin/sh", "sh", "/bin/bash", "bash")
SCRIPT_TIMEOUT = 900
MESSAGE_LINES, MESSAGE_BYTES = 80, 2048
VOLUMES = config.STATE / "volumes"
_FIELD_KEY = re.compile(r"^metadata\.(labels|annotations)\['([^']+)'\]$")
_SERVICE_REMOTE = re.compile(r"\b(tcp|ssl):([a-z0-9-]+)\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?:([0-9]+)\b")


def volume_dir(namespace, volume):
    """The lab directory that stands for a pod's volume; None for a volume the lab cannot mount."""
    if volume.get("nfs"):
        nfs = volume["nfs"]
        return VOLUMES / "nfs" / nfs["server"] / nfs["path"].strip("/")
    if volume.get("persistentVolumeClaim"):
        return VOLUMES / "pvc" / namespace / volume["persistentVolumeClaim"]["claimName"]
    if volume.get("hostPath"):
        return VOLUMES / "host" / volume["hostPath"]["path"].strip("/")
    return None


def resolve_remotes(value, services):
    """OVSDB remotes of a Service (<service>.<namespace>.svc[.cluster.local]) replaced by its lab members;
    services: {(service, namespace): remotes}."""
    def member_remotes(match):
        return services.get((match.group(2), match.group(3)), match.group(0))
    return _SERVICE_REMOTE.sub(member_remotes, value)


def field_value(pod, path):
    """The value the downward API gives an env var for fieldRef.fieldPath (an absent label or annotation is empty, as
    the kubelet makes it), or None for a path the lab does not play."""
    meta = pod["metadata"]
    found = _FIELD_KEY.match(path)
    if found:
        return (meta.get(found.group(1)) or {}).get(found.group(2), "")
    if path in ("metadata.name", "metadata.namespace", "metadata.uid"):
        return meta.get(path.split(".", 1)[1], "")
    if path == "spec.nodeName":
        return pod["spec"].get("nodeName", "")
    return None


def key_value(pod, source, read):
    """(value, problem) of an env var from a Secret's or a ConfigMap's key (valueFrom.secretKeyRef,
    .configMapKeyRef), read from the pod's cluster as the kubelet reads it; a missing object or key the kubelet
    refuses (CreateContainerConfigError) unless the reference is optional. None for another source."""
    for ref_kind, plural, kind in (("secretKeyRef", "secrets", "Secret"), ("configMapKeyRef", "configmaps",
                                                                             "ConfigMap")):
        ref = source.get(ref_kind)
        if ref is None:
            continue
        namespace = pod["metadata"]["namespace"]
        data = (read(plural, namespace, ref["name"]) or {}).get("data") or {}
        if ref["key"] not in data:
            if ref.get("optional"):
                return "", None
            return None, "couldn't find key %s in %s %s/%s" % (ref["key"], kind, namespace, ref["name"])
        value = data[ref["key"]]
        return (base64.b64decode(value).decode() if kind == "Secret" else value), None
    return None, None


def container_env(pod, services, read=None):
    """(env, problem): the container's environment as the lab runs it, or the reason it cannot; read(plural,
    namespace, name) reads a Secret or ConfigMap of the pod's cluster."""
    spec = pod["spec"]
    container = spec["containers"][0]
    volumes = dict((v["name"], v) for v in spec.get("volumes") or [])
    mounts = []
    for mount in container.get("volumeMounts") or []:
        found = volume_dir(pod["metadata"]["namespace"], volumes.get(mount["name"]) or {})
        if found is None:
            return None, "the lab cannot mount volume %s" % mount["name"]
        mounts.append((mount["mountPath"].rstrip("/"), found))
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(VOLUMES)}
    for item in container.get("env") or []:
        if "value" in item:
            value = item["value"]
        else:
            source = item.get("valueFrom") or {}
            path = (source.get("fieldRef") or {}).get("fieldPath")
            value, problem = (field_value(pod, path), None) if path else key_value(pod, source, read)
            if problem:
                return None, problem
            if value is None:
                return None, "the lab plays only literal env values, metadata fieldRefs and Secret and ConfigMap " \
                    "keys (%s has %s)" % (item["name"], json.dumps(item.get("valueFrom")))
        value = resolve_remotes(value, services)
        for path, found in mounts:
            if value == path or value.startswith(path + "/"):
                found.mkdir(parents=True, exist_ok=True)
                value = str(found) + value[len(path):]
        env[item["name"]] = value
    return env, None


def run(pod, services, read=None):
    """(exit code, message) of the pod's container, run here."""
    container = pod["spec"]["containers"][0]
    argv = list(container.get("command") or []) + list(container.get("args") or [])
    if len(argv) < 3 or argv[0] not in SHELLS or argv[-2] not in ("-c", "-ec", "-ce", "-euc", "-eu"):
        return 127, "the lab plays only a shell running a script, not %r" % (argv[:2],)
    env, problem = container_env(pod, services, read)
    if problem:
        return 1, problem
    try:
        done = subprocess.run(["/bin/sh", argv[-2], argv[-1]], env=env, capture_output=True, text=True,
                              timeout=SCRIPT_TIMEOUT, check=False, cwd=env["HOME"])
    except subprocess.TimeoutExpired:
        return 137, "killed after %ss" % SCRIPT_TIMEOUT
    return done.returncode, log_tail(done.stderr if done.returncode else done.stdout)


def log_tail(text):
    """What the kubelet makes a failed container's termination message with FallbackToLogsOnError: the log's last
    80 lines, at most its last 2048 bytes (kubecontainer.MaxContainerTerminationMessageLogLines, ...Length)."""
    return "\n".join(text.strip().splitlines()[-MESSAGE_LINES:])[-MESSAGE_BYTES:]


def ovn_services():
    """The OVN database Services of the lab's control plane and their members' remotes."""
    return dict(((service, "ovn-system"), data_plane.remotes(db)) for db, service in data_plane.SERVICES.items())


class ShellPods:
    """One pass over the pods of the watched namespaces (the loop of the stand-in that holds it). Each container runs
    beside the passes, as a kubelet runs it beside the cluster's controllers (a Ceph Job waits for what the Rook
    stand-in's passes do); its exit is written on the first pass after it ended."""

    def __init__(self, ctl, kube, pods_urls):
        self.ctl = ctl
        self.kube = kube
        self.urls = pods_urls
        self.running = {}  # pod uid -> {"pod", "thread", "exit": (code, message) once ended}
        os.makedirs(VOLUMES, exist_ok=True)

    def read(self, plural, namespace, name):
        return self.kube.get(path("v1", plural, namespace, name))

    def start(self, pod):
        entry = {"pod": pod}

        def container():
            entry["exit"] = run(pod, ovn_services(), self.read)
            self.ctl.wake.set()

        entry["thread"] = threading.Thread(target=container, name="pod-" + pod["metadata"]["name"], daemon=True)
        self.running[pod["metadata"]["uid"]] = entry
        entry["thread"].start()

    def reconcile(self):
        for uid, entry in list(self.running.items()):
            if "exit" not in entry:
                continue
            del self.running[uid]
            pod, (code, message) = entry["pod"], entry["exit"]
            meta = pod["metadata"]
            try:
                self.kube.request("PATCH", object_path("v1", "pods", pod), kubelets.exit_patch(code, message),
                                  params={"fieldManager": "lab-" + PLAYER},
                                  content_type="application/merge-patch+json")
            except ApiError as exc:
                if exc.code != 404:  # a pod deleted while its container ran has no exit to record
                    raise
            self.ctl.log("pod %s/%s: container exited %d: %s" % (meta["namespace"], meta["name"], code,
                                                                 message.replace("\n", " ")[-200:]))
        for url in self.urls:
            for pod in self.kube.list(url):
                meta = pod["metadata"]
                notes, labels = meta.get("annotations") or {}, meta.get("labels") or {}
                if (notes.get(kubelets.PLAYED_BY) != PLAYER or kubelets.EXIT_CODE in notes
                        or kubelets.KWOK_FAILED in labels or meta.get("deletionTimestamp")
                        or (pod.get("status") or {}).get("phase") != "Running" or meta["uid"] in self.running):
                    continue
                self.start(pod)
        if self.running:
            self.ctl.next_due = min(self.ctl.next_due, 1.0)
