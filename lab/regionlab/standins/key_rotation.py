"""Keystone's fernet and credential key rotation, as upstream's keystone-operator runs it.

Modelled on github.com/c5c3/cobaltcore operators/keystone/internal/controller (reconcile_fernet.go,
reconcile_credential.go, rotation_cronjob.go, rotation_staging.go, rotation_validation.go,
scripts/fernet_rotate.sh, scripts/credential_rotate.sh) and internal/common/rotation (CommitStaged):

- the production Secrets <keystone>-fernet-keys and <keystone>-credential-keys hold the keys (data "0"..,
  each a 44-character URL-safe base64 key); the operator generates them;
- the staging Secrets <keystone>-<kind>-keys-rotation (label cobaltcore.c5c3.io/rotation-target), empty
  between rotations, which the rotation Job PATCHes with the rotated keys and the annotation
  cobaltcore.c5c3.io/rotation-completed-at;
- the CronJobs <keystone>-<kind>-rotate (spec.fernet / spec.credentialKeys: rotationSchedule, suspend)
  with the ServiceAccount, Role and RoleBinding of the same name (get on the production Secret, get and
  patch on the staging Secret);
- the operator's apply: a staged payload with the annotation is validated (3 to maxActiveKeys+1 keys of
  44 characters decoding to 32 bytes, no two alike), copied onto the production Secret with the same
  annotation, and the staging Secret deleted (event <Kind>KeysRotated); a rejected payload is cleared
  from the staging Secret (Warning event RotationRejected), a malformed annotation gives
  RotationAnnotationInvalid.

The lab's differences: no container runs, so the rotation pods' container is played here. The CronJob's
pod template carries the annotation lab.c5c3.io/played-by; KWOK's pod-complete Stage leaves such pods
alone (kubelets.py). This module runs the container's script on a Running pod - the real `keystone-manage
fernet_rotate` (or `credential_rotate` then `credential_migrate`) on a copy of the production keys, then
the PATCH of the staging Secret - and then marks the pod's exit: annotation lab.c5c3.io/exit-code "0"
(KWOK's lab Stage pod-exit completes it) or KWOK's own chaos label pod-container-running-failed (KWOK's
Stage fails it; the kubelet would restart the container in place with restartPolicy OnFailure, KWOK fails
the pod and the Job controller starts the next one: the Job's failure count is the same). The key
repositories the lab's Keystone reads are the kubelet's projection of the production Secrets, written as
soon as they change (a kubelet takes up to a minute). The pod template has no keystone.conf and script
ConfigMaps (the lab keeps keystone.conf on disk).
"""

import base64
import binascii
import datetime
import hashlib
import os
import secrets
import shutil
import tempfile
import threading
from pathlib import Path

from .. import kubelets, pki
from . import loop

COMPLETED_AT = "cobaltcore.c5c3.io/rotation-completed-at"
TARGET_LABEL = "cobaltcore.c5c3.io/rotation-target"
PLAYED_BY, EXIT_CODE, KWOK_FAILED = kubelets.PLAYED_BY, kubelets.EXIT_CODE, kubelets.KWOK_FAILED
KINDS = ("fernet", "credential")
SPEC_SECTION = {"fernet": "fernet", "credential": "credentialKeys"}
TITLE = {"fernet": "Fernet", "credential": "Credential"}
COMMANDS = {"fernet": (("fernet_rotate",),), "credential": (("credential_rotate",), ("credential_migrate",))}
MAX_KEYS_ENV = {"fernet": "OS_fernet_tokens__max_active_keys", "credential": "OS_credential__max_active_keys"}
DEFAULT_SCHEDULE = "0 0 * * 0"
MIN_KEYS = 3


def keys_secret(keystone, kind):
    return "%s-%s-keys" % (keystone, kind)


def staging_secret(keystone, kind):
    return "%s-%s-keys-rotation" % (keystone, kind)


def cronjob_name(keystone, kind):
    return "%s-%s-rotate" % (keystone, kind)


def component(kind):
    return "%s-rotation" % kind


def max_active_keys(spec, kind):
    """normalized<Kind>MaxActiveKeys: the spec's value with a floor of 3."""
    return max(int((spec.get(SPEC_SECTION[kind]) or {}).get("maxActiveKeys") or 0), MIN_KEYS)


def labels(keystone, component_name=None):
    """naming.CommonLabels / ComponentLabels of the keystone app."""
    found = {"app.kubernetes.io/name": "keystone", "app.kubernetes.io/instance": keystone,
             "app.kubernetes.io/managed-by": "keystone-operator"}
    if component_name:
        found["app.kubernetes.io/component"] = component_name
    return found


def new_key():
    """generateFernetKey: 32 random bytes, URL-safe base64 with padding (44 characters)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32))


def as_data(keys):
    """{index: key bytes} as a Secret's data."""
    return {str(index): base64.b64encode(key).decode() for index, key in keys.items()}


def generated_data(count):
    return as_data({index: new_key() for index in range(count)})


def decoded(data):
    """A Secret's data as {name: bytes} (None for a value that is not base64)."""
    out = {}
    for name, value in (data or {}).items():
        try:
            out[name] = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            out[name] = None
    return out


def validation_error(data, min_keys, max_keys):
    """validateRotationOutput's verdict on a staged payload: None when valid, else upstream's message."""
    keys = decoded(data)
    if len(keys) < min_keys or len(keys) > max_keys:
        return "key count out of range: got %d, want [%d, %d]" % (len(keys), min_keys, max_keys)
    indices = sorted(keys)
    for index in indices:
        value = keys[index] or b""
        if len(value) != 44:
            return 'invalid key format: key "%s" length=%d, want 44' % (index, len(value))
        try:
            raw = base64.b64decode(value, altchars=b"-_", validate=True)  # strict, as Go's URLEncoding
        except (binascii.Error, ValueError) as exc:
            return 'invalid key format: key "%s" base64 decode: %s' % (index, exc)
        if len(raw) != 32:
            return 'invalid key format: key "%s" decoded length=%d, want 32' % (index, len(raw))
    for i, first in enumerate(indices):
        for second in indices[i + 1:]:
            if keys[first] == keys[second]:
                return 'duplicate keys detected: keys "%s" and "%s"' % (first, second)
    return None


def completed_at(secret):
    """The rotation-completed-at annotation: (value, parsed datetime or None); (None, None) when absent."""
    value = (((secret or {}).get("metadata") or {}).get("annotations") or {}).get(COMPLETED_AT)
    if not value:
        return None, None
    try:
        return value, datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return value, None


# The objects the operator keeps -------------------------------------------------------------------

def keys_secret_manifest(cr, kind, data):
    name = cr["metadata"]["name"]
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": keys_secret(name, kind), "namespace": cr["metadata"]["namespace"],
                         "labels": labels(name), "ownerReferences": [loop.owner_reference(cr)]},
            "data": data}


def staging_manifest(cr, kind):
    name = cr["metadata"]["name"]
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": staging_secret(name, kind), "namespace": cr["metadata"]["namespace"],
                         "labels": dict(labels(name), **{TARGET_LABEL: "%s-keys" % kind}),
                         "ownerReferences": [loop.owner_reference(cr)]}}


def rbac_manifests(cr, kind):
    """EnsureRBAC: the rotation Job's ServiceAccount, Role and RoleBinding."""
    name, namespace = cr["metadata"]["name"], cr["metadata"]["namespace"]
    account = cronjob_name(name, kind)
    meta = {"name": account, "namespace": namespace, "ownerReferences": [loop.owner_reference(cr)]}
    rules = [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": [keys_secret(name, kind)]},
             {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "patch"],
              "resourceNames": [staging_secret(name, kind)]}]
    return [
        ("v1", "serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta}),
        ("rbac.authorization.k8s.io/v1", "roles",
         {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta, "rules": rules}),
        ("rbac.authorization.k8s.io/v1", "rolebindings",
         {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta,
          "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account}}),
    ]


def cronjob_manifest(cr, kind, played_by):
    """keyRotationCronJob: the rotation Job's pod, on the spec's schedule, suspended as the spec says."""
    name, namespace, spec = cr["metadata"]["name"], cr["metadata"]["namespace"], cr.get("spec") or {}
    section = spec.get(SPEC_SECTION[kind]) or {}
    image = spec.get("image") or {}
    image_ref = "%s:%s" % (image.get("repository") or "ghcr.io/c5c3/keystone", image.get("tag") or "latest")
    other = "credential" if kind == "fernet" else "fernet"
    key_dir, source = "/etc/keystone/%s-keys" % kind, "/%s-keys-src" % kind
    pod = {
        "serviceAccountName": cronjob_name(name, kind),
        "restartPolicy": "OnFailure",
        "securityContext": {"fsGroup": 42424},
        "initContainers": [{
            "name": "copy-keys", "image": image_ref,
            "command": ["sh", "-c", "install -m 0400 %s/* %s/" % (source, key_dir)],
            "volumeMounts": [{"name": "%s-keys-src" % kind, "mountPath": source, "readOnly": True},
                             {"name": "%s-keys" % kind, "mountPath": key_dir}]}],
        "containers": [{
            "name": "%s-rotate" % kind, "image": image_ref, "command": ["/scripts/%s_rotate.sh" % kind],
            "env": [{"name": "SECRET_NAME", "value": staging_secret(name, kind)},
                    {"name": "SECRET_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                    {"name": MAX_KEYS_ENV[kind], "value": str(max_active_keys(spec, kind))}],
            "volumeMounts": [{"name": "%s-keys" % kind, "mountPath": key_dir},
                             {"name": "%s-keys" % other, "mountPath": "/etc/keystone/%s-keys" % other,
                              "readOnly": True}]}],
        "volumes": [
            {"name": "%s-keys-src" % kind, "secret": {"secretName": keys_secret(name, kind), "defaultMode": 0o400}},
            {"name": "%s-keys" % kind, "emptyDir": {}},
            {"name": "%s-keys" % other, "secret": {"secretName": keys_secret(name, other), "defaultMode": 0o400}}],
    }
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": cronjob_name(name, kind), "namespace": namespace, "labels": labels(name),
                         "ownerReferences": [loop.owner_reference(cr)]},
            "spec": {"schedule": section.get("rotationSchedule") or DEFAULT_SCHEDULE,
                     "suspend": bool(section.get("suspend")),
                     "jobTemplate": {"spec": {"template": {
                         "metadata": {"labels": labels(name, component(kind)), "annotations": {PLAYED_BY: played_by}},
                         "spec": pod}}}}}


# The kubelet's projection ---------------------------------------------------------------------------

def project(data, directory):
    """Write the production Secret's keys as the key repository's files (0600); True when anything changed.

    The kubelet swaps a Secret volume's files at once (AtomicWriter's ..data symlink). Here files change one by one,
    so new names come first, then changed ones, then removals: a key kept across a rotation (the staged key that
    becomes the primary under a new name) is never missing while Keystone reads the repository."""
    wanted = {name: value for name, value in decoded(data).items() if value is not None}
    present = {entry.name: entry.read_bytes() for entry in directory.iterdir() if entry.is_file()} \
        if directory.exists() else {}
    if present == wanted:
        return False
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    changed = [name for name, value in wanted.items() if present.get(name) != value]
    for name in sorted(changed, key=lambda n: n in present):
        pki.write_private(directory / name, wanted[name])
    for name in set(present) - set(wanted):
        (directory / name).unlink()
    return True


def repository_data(directory):
    """The key repository's files as a Secret's data (the lab's Keystones made before the Secrets existed)."""
    if not (directory / "0").exists():
        return None
    return as_data({entry.name: entry.read_bytes() for entry in directory.iterdir() if entry.is_file()})


# The rotation pod's container ------------------------------------------------------------------------

class Container:
    """The rotation script of one pod, in a thread: keystone-manage on a copy of the keys, then the PATCH."""

    def __init__(self, inst, kind, keys_data, max_keys, patch_staging, wake, failure=None):
        self.done = False
        self.exit_code = None
        self.message = ""
        self._args = (inst, kind, keys_data, max_keys, patch_staging, failure)
        self._wake = wake
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        try:
            self.exit_code, self.message = self._script(*self._args)
        except Exception as exc:  # pylint: disable=broad-except  # a crashed container exits non-zero
            self.exit_code, self.message = 1, str(exc)
        self.done = True
        self._wake.set()

    @staticmethod
    def _script(inst, kind, keys_data, max_keys, patch_staging, failure):
        work = tempfile.mkdtemp(prefix="rotate-%s-" % kind, dir=inst.home)
        try:
            key_dir = os.path.join(work, "%s-keys" % kind)
            project(keys_data, Path(key_dir))
            conf = Path(work) / "keystone.conf"
            repositories = {"fernet_keys": key_dir} if kind == "fernet" else {"credential_keys": key_dir}
            if failure == "fail":  # injected: keystone-manage finds no key repository and exits non-zero
                repositories = {name: os.path.join(work, "missing") for name in repositories}
            conf.write_text(inst.conf_text(max_keys, **repositories))
            for args in COMMANDS[kind]:
                # keystone-manage wants the key files' owner when run as root (the lab); a pod runs as keystone
                owner = ("--keystone-user", "root", "--keystone-group", "root") if os.getuid() == 0 else ()
                code, detail = inst.run_manage(conf, *(args + owner))
                if code != 0:
                    return code, "keystone-manage %s: %s" % (args[0], detail)
            keys = {entry.name: entry.read_bytes() for entry in Path(key_dir).iterdir() if entry.is_file()}
            if failure == "reject":  # injected: the script stages one key twice; the operator rejects it
                keys["0"] = keys[max(keys, key=int)]
            stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            patch_staging({"metadata": {"annotations": {COMPLETED_AT: stamp}}, "data": as_data(keys)})
            return 0, "%s keys staging Secret updated successfully" % TITLE[kind]
        finally:
            shutil.rmtree(work, ignore_errors=True)


def digest(data):
    """A short digest of a Secret's data (for the stand-in's log; never the keys)."""
    return hashlib.sha256(repr(sorted((data or {}).items())).encode()).hexdigest()[:12]
