"""The lab's kubelet for pods whose container is a shell script: the collection's OVN database Jobs (ovn_database).

No container runs in the lab. A pod annotated lab.c5c3.io/played-by: shell-pods (the lab inventory's
cobaltcore_ovn_backup.pod_annotations) is left alone by KWOK's pod-complete Stage (kubelets.py); once KWOK has it
Running, this module runs its container here, as the container would run it:

- the command must be a shell with its script (["/bin/sh", "-ec", <script>]); the script runs with the real tools
  of this machine (ovsdb-client of Debian's Open vSwitch);
- the container's env: literal values and the downward API's metadata fields (valueFrom.fieldRef: metadata.name,
  .namespace, .uid, .labels['<key>'], .annotations['<key>'], spec.nodeName), as the kubelet resolves them; with what a
  pod sees resolved to the lab: an OVSDB remote of an OVN database Service
  (tcp:ovn-nb.ovn-system.svc[.cluster.local]:6641) becomes the lab's members of that database (ovn.py), and a value
  under a volume mount's path the lab directory of that volume (STATE/volumes/: nfs/<server>/<path>,
  pvc/<namespace>/<claim>, host/<path>); any other volume cannot be mounted here and fails the container;
- then the exit, as kubelets.exit_patch writes it: code 0 completes the pod, any other fails it with the end of
  what the script wrote to stderr.

The scripts are short (a backup of the lab's databases takes milliseconds), so they run in the loop's pass, at most
SCRIPT_TIMEOUT seconds each.
"""

import json
import os
import re
import subprocess

from .. import config, kubelets
from .. import ovn as data_plane
from .client import object_path

PLAYER = "shell-pods"
SHELLS = ("/bin/sh", "sh", "/bin/bash", "bash")
SCRIPT_TIMEOUT = 60
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


def container_env(pod, services):
    """(env, problem): the container's environment as the lab runs it, or the reason it cannot."""
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
            path = ((item.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
            value = field_value(pod, path) if path else None
            if value is None:
                return None, "the lab plays only literal env values and metadata fieldRefs (%s has %s)" % (
                    item["name"], json.dumps(item.get("valueFrom")))
        value = resolve_remotes(value, services)
        for path, found in mounts:
            if value == path or value.startswith(path + "/"):
                found.mkdir(parents=True, exist_ok=True)
                value = str(found) + value[len(path):]
        env[item["name"]] = value
    return env, None


def run(pod, services):
    """(exit code, message) of the pod's container, run here."""
    container = pod["spec"]["containers"][0]
    argv = list(container.get("command") or []) + list(container.get("args") or [])
    if len(argv) < 3 or argv[0] not in SHELLS or argv[-2] not in ("-c", "-ec", "-ce", "-euc", "-eu"):
        return 127, "the lab plays only a shell running a script, not %r" % (argv[:2],)
    env, problem = container_env(pod, services)
    if problem:
        return 1, problem
    try:
        done = subprocess.run(["/bin/sh", argv[-2], argv[-1]], env=env, capture_output=True, text=True,
                              timeout=SCRIPT_TIMEOUT, check=False, cwd=env["HOME"])
    except subprocess.TimeoutExpired:
        return 137, "killed after %ss" % SCRIPT_TIMEOUT
    return done.returncode, (done.stderr if done.returncode else done.stdout).strip()[-300:]


def ovn_services():
    """The OVN database Services of the lab's control plane and their members' remotes."""
    return dict(((service, "ovn-system"), data_plane.remotes(db)) for db, service in data_plane.SERVICES.items())


class ShellPods:
    """One pass over the pods of the watched namespaces (the c5c3-operator stand-in's loop)."""

    def __init__(self, ctl, kube, pods_urls):
        self.ctl = ctl
        self.kube = kube
        self.urls = pods_urls
        os.makedirs(VOLUMES, exist_ok=True)

    def reconcile(self):
        for url in self.urls:
            for pod in self.kube.list(url):
                meta = pod["metadata"]
                notes, labels = meta.get("annotations") or {}, meta.get("labels") or {}
                if (notes.get(kubelets.PLAYED_BY) != PLAYER or kubelets.EXIT_CODE in notes
                        or kubelets.KWOK_FAILED in labels or meta.get("deletionTimestamp")
                        or (pod.get("status") or {}).get("phase") != "Running"):
                    continue
                code, message = run(pod, ovn_services())
                self.kube.request("PATCH", object_path("v1", "pods", pod), kubelets.exit_patch(code, message),
                                  params={"fieldManager": "lab-" + PLAYER},
                                  content_type="application/merge-patch+json")
                self.ctl.log("pod %s/%s: container exited %d: %s" % (meta["namespace"], meta["name"], code,
                                                                     message.replace("\n", " ")[-200:]))

