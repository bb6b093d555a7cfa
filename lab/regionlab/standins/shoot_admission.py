"""gardener-apiserver's Shoot update strategy for `gardener.cloud/operation`, as a mutating webhook.

Upstream (gardener v1.146.3, pkg/apiserver/registry/core/shoot/strategy.go, PrepareForUpdate ->
mustIncreaseGeneration) every update of a Shoot (not shoots/status) looks at the operation
annotation once the Shoot has a status.lastOperation: `retry` on a Failed Shoot and `reconcile` on
any other bump metadata.generation and are removed, in the client's own write. Any other case
leaves the annotation and the generation alone.

In the lab Shoot is a CRD. Its strategy bumps the generation on any change outside metadata and
runs after mutating admission, so this webhook (the garden-front process serves it; failurePolicy
Fail, as an unavailable gardener-apiserver fails every write) bumps it by raising the lab-only
top-level integer LAB_FIELD, and removes the annotation, with a JSON patch. It also keeps LAB_FIELD
at its stored value when a client's write omits or changes it, so an unchanged PUT or apply bumps
nothing.

Played: `reconcile` and `retry` (also among `;`-separated operations, as upstream), and a spec
change that skips the annotation (confineSpecUpdateRollout: only a hibernation change counts).
Not played: the rotate-*, rotate-ssh-keypair, rollout-workers and force-in-place-update operations
and the force-deletion annotation (they stay on the Shoot and bump nothing).

On create and update it also plays the rules of a Shoot's Kubernetes version (shoot_versions.py): a short version
defaulted, and a version the cloud profile does not offer, a downgrade or a skipped minor refused.
"""

import base64
import json
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .. import config, kube
from . import shoot_versions
from .loop import log

OPERATION = "gardener.cloud/operation"
SEPARATOR = ";"
RECONCILE = "reconcile"
RETRY = "retry"
# The lab-only sibling of spec whose change makes the CRD bump metadata.generation.
LAB_FIELD = "labOperationBumps"
PATH = "/mutate-shoots"
CONFIGURATION = "lab-gardener-apiserver-shoots"
MANAGER = "lab-gardener-apiserver"
WEBHOOK_CONFIGURATIONS = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"


def _operations(value):
    """utils.SplitAndTrimString(value, ";"): nothing for an empty value."""
    return [part.strip() for part in value.split(SEPARATOR)] if value else []


def _hibernated(shoot):
    return bool((((shoot.get("spec") or {}).get("hibernation") or {}).get("enabled")))


def _spec_changed(old, new):
    """mustIncreaseGenerationForSpecChanges."""
    maintenance = (new.get("spec") or {}).get("maintenance") or {}
    if maintenance.get("confineSpecUpdateRollout"):
        return _hibernated(old) != _hibernated(new)
    return (old.get("spec") or {}) != (new.get("spec") or {})


def must_increase(old, new):
    """(bump, annotation) of mustIncreaseGeneration beside the spec: annotation is the operation
    annotation's value after the update, None when it is removed."""
    annotations = (new.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(OPERATION)
    if _spec_changed(old, new):
        return False, value
    # The status is the stored one (PrepareForUpdate copies it before this check).
    last = (old.get("status") or {}).get("lastOperation")
    if last is None:
        return False, value
    operations = _operations(value or "")
    updated = list(operations)
    bump = remove = False
    if last.get("state") == "Failed":
        if value == RETRY:
            bump = remove = True
    else:
        for operation in operations:
            if operation == RECONCILE:
                bump = True
                updated = [o for o in updated if o != operation]
    if remove or not updated:
        return bump, None
    if len(updated) != len(operations):
        return bump, SEPARATOR.join(updated)
    return bump, value


def patch(old, new):
    """The JSON patch for an UPDATE of a Shoot: the annotation as upstream leaves it, LAB_FIELD at its
    stored value (plus one for a bump)."""
    bump, annotation = must_increase(old, new)
    ops = []
    annotations = (new.get("metadata") or {}).get("annotations") or {}
    key = "/metadata/annotations/" + OPERATION.replace("~", "~0").replace("/", "~1")
    if annotation is None and OPERATION in annotations:
        ops.append({"op": "remove", "path": key})
    elif annotation is not None and annotation != annotations.get(OPERATION):
        ops.append({"op": "replace", "path": key, "value": annotation})
    stored = old.get(LAB_FIELD)
    wanted = (stored or 0) + 1 if bump else stored
    if wanted is None:
        if LAB_FIELD in new:
            ops.append({"op": "remove", "path": "/" + LAB_FIELD})
    elif new.get(LAB_FIELD) != wanted:
        ops.append({"op": "add", "path": "/" + LAB_FIELD, "value": wanted})
    return ops


def review(body, profile_of=lambda shoot: None):
    """The AdmissionReview response to an AdmissionReview request; profile_of(shoot): its cloud profile or None."""
    request = body.get("request") or {}
    response = {"uid": request.get("uid", ""), "allowed": True}
    operation = request.get("operation")
    if (operation in ("CREATE", "UPDATE") and not request.get("subResource")
            and (request.get("kind") or {}).get("kind") == "Shoot"):
        new = request.get("object") or {}
        version, refusal = shoot_versions.review(operation, request.get("oldObject"), new, profile_of(new))
        if refusal:
            code, reason, message = refusal
            response.update(allowed=False, status={"code": code, "reason": reason, "message": message})
            return _review_response(body, response)
        ops = patch(request.get("oldObject") or {}, new) if operation == "UPDATE" else []
        if version:
            ops.append({"op": "replace", "path": "/spec/kubernetes/version", "value": version})
        if ops:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
    return _review_response(body, response)


def _review_response(body, response):
    return {"apiVersion": body.get("apiVersion") or "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": response}


def cloud_profile(garden):
    """profile_of for review: the Shoot's CloudProfile (or NamespacedCloudProfile) as the garden serves it."""
    session = kube._session(garden)

    def profile_of(shoot):
        spec = shoot.get("spec") or {}
        ref = spec.get("cloudProfile") or {"kind": "CloudProfile", "name": spec.get("cloudProfileName")}
        if not ref.get("name"):
            return None
        if ref.get("kind") == "NamespacedCloudProfile":
            url = "%s/apis/core.gardener.cloud/v1beta1/namespaces/%s/namespacedcloudprofiles/%s" % (
                garden.server, (shoot.get("metadata") or {}).get("namespace"), ref["name"])
        else:
            url = "%s/apis/core.gardener.cloud/v1beta1/cloudprofiles/%s" % (garden.server, ref["name"])
        resp = session.get(url, timeout=10)
        if resp.status_code == 404:
            return None
        resp.raise_for_status()
        profile = resp.json()
        if profile.get("kind") == "NamespacedCloudProfile":
            return {"spec": (profile.get("status") or {}).get("cloudProfileSpec") or {}}
        return profile
    return profile_of


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "lab-gardener-apiserver"

    def setup(self):
        self.request.settimeout(30)
        self.request.do_handshake()
        super().setup()

    def log_message(self, format, *args):  # noqa: A002 -- BaseHTTPRequestHandler's signature
        pass

    def do_POST(self):
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        except (ValueError, OSError):
            self.reply(400, {"error": "malformed AdmissionReview"})
            return
        if self.path.split("?")[0] != PATH:
            self.reply(404, {"error": "not found"})
            return
        out = review(body, self.server.profile_of)
        meta = (((body.get("request") or {}).get("object") or {}).get("metadata") or {})
        shoot = "Shoot %s/%s" % (meta.get("namespace"), meta.get("name"))
        if out["response"].get("status"):
            log("%s: refused: %s" % (shoot, out["response"]["status"]["message"]))
        elif out["response"].get("patch"):
            log("%s: %s" % (shoot, base64.b64decode(out["response"]["patch"]).decode()))
        self.reply(200, out)

    def reply(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, garden):
        super().__init__(("127.0.0.1", config.GARDEN_ADMISSION_PORT), Handler)
        self.profile_of = cloud_profile(garden)
        # The garden's serving certificate (127.0.0.1 is among its names); only the garden's API
        # server calls, on loopback, so no client certificate is asked for.
        serving = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        serving.load_cert_chain(str(garden.pki / "server.crt"), str(garden.pki / "server.key"))
        self.socket = serving.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)

    def handle_error(self, request, client_address):
        log("admission connection from %s: %s" % (client_address, sys.exc_info()[1]))


def url():
    return "https://127.0.0.1:%d%s" % (config.GARDEN_ADMISSION_PORT, PATH)


def configuration(garden):
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": CONFIGURATION},
        "webhooks": [{
            "name": "shoots.lab-gardener-apiserver.c5c3.io",
            "clientConfig": {"url": url(),
                             "caBundle": base64.b64encode((garden.pki / "ca.crt").read_bytes()).decode()},
            "rules": [{"apiGroups": ["core.gardener.cloud"], "apiVersions": ["v1beta1"],
                       "operations": ["CREATE", "UPDATE"], "resources": ["shoots"], "scope": "Namespaced"}],
            "failurePolicy": "Fail", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "timeoutSeconds": 10, "matchPolicy": "Equivalent", "reinvocationPolicy": "Never",
        }],
    }


def register(garden):
    """Server-side apply the MutatingWebhookConfiguration on the garden's API server."""
    resp = kube._session(garden).patch(
        garden.server + WEBHOOK_CONFIGURATIONS + "/" + CONFIGURATION, data=json.dumps(configuration(garden)),
        params={"fieldManager": MANAGER, "force": "true"},
        headers={"Content-Type": "application/apply-patch+yaml"}, timeout=20)
    resp.raise_for_status()


def start(garden):
    """Serve the webhook in a thread, then register it (a Shoot write never meets it unserved)."""
    server = Server(garden)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    register(garden)
    log("%s: admission webhook %s registered" % (MANAGER, url()))
    return server
