"""playbooks/rotate.yml on the lab region: the Keystone fernet and credential keys rotate through the
keystone-operator's CronJobs (the stand-in plays the Job's container with the real keystone-manage), while a
client authenticates, validates an older token and reads a stored credential in a loop without one failure.
"""

import base64
import json
import os
import threading
import time

import pytest
import requests
import yaml
from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from conftest import REGION_HOST, REGION_NAMESPACE, REPO, _play, failures, get_object, keystone_endpoint, \
    lab_kubectl, objects, run_verbose, secret_data, standins_restored, task_result, task_results, update_standins, \
    wait_truthy
from regionlab import config

ROTATE = REPO / "playbooks" / "rotate.yml"
KEYSTONE = REPO / "playbooks" / "keystone.yml"
TASK = "Rotate the Keystone keys"
CONTROL_PLANE = config.STATE / "kubeconfig" / ("%s.yaml" % REGION_HOST)
# How long a client that authenticates again after a 401 keeps trying before the request counts as failed.
REAUTH_SECONDS = 3.0


def rotate(kind, rotation_id, *args, **extra):
    rc, out, unused_seconds = _play(ROTATE, "-e", json.dumps(dict(extra, rotate=kind, rotation_id=rotation_id)), *args)
    return rc, out


def the_task(out):
    return task_result(out, TASK)


def keys(kind):
    """The region Keystone's production key Secret: {index: key}."""
    return secret_data(CONTROL_PLANE, "keystone-%s-keys" % kind)


def completed_at(kind):
    found = get_object(REGION_HOST, "-n", REGION_NAMESPACE, "secret", "keystone-%s-keys" % kind, missing_ok=False)
    return found["metadata"].get("annotations", {}).get("cobaltcore.c5c3.io/rotation-completed-at")


def readable(token, key_set):
    """Whether these fernet keys decrypt a Keystone token (keystone strips the base64 padding)."""
    padded = token + "=" * (-len(token) % 4)
    try:
        MultiFernet([Fernet(k.encode()) for k in key_set.values()]).decrypt(padded.encode())
        return True
    except InvalidToken:
        return False


class Client(threading.Thread):
    """A Keystone user in a loop: a new token, the validation of a token from before (or, reauth: of its own, made
    again once on a 401 as keystoneauth does), a stored credential read."""

    def __init__(self, url, auth, credential=None, reauth=False):
        super().__init__(daemon=True)
        self.url, self.auth, self.credential, self.reauth = url, auth, credential, reauth
        self.old = self.token()
        self.requests, self.reauthentications, self.failures, self.stop = 0, 0, [], threading.Event()

    def token(self):
        # A callable auth is read again for every token, as K-ORC reads its Secret for every reconcile.
        resp = requests.post(self.url + "/auth/tokens", json=self.auth() if callable(self.auth) else self.auth,
                             timeout=10)
        if resp.status_code != 201:
            raise requests.HTTPError("token request: %s %s" % (resp.status_code, resp.text[:200]))
        return resp.headers["X-Subject-Token"]

    def run(self):
        while not self.stop.is_set():
            try:
                new = self.token()
                subject = new if self.reauth else self.old
                checks = [requests.get(self.url + "/auth/tokens", timeout=10,
                                       headers={"X-Auth-Token": new, "X-Subject-Token": subject})]
                deadline = time.monotonic() + REAUTH_SECONDS
                while self.reauth and checks[0].status_code in (401, 404) and time.monotonic() < deadline:
                    # Revoked meanwhile (Keystone revokes a user's tokens issued up to the second of its password
                    # change): authenticate again, as keystoneauth does, within a reconcile's retry.
                    self.reauthentications += 1
                    time.sleep(0.2)
                    try:
                        new = self.token()
                    except requests.HTTPError:
                        continue
                    checks = [requests.get(self.url + "/auth/tokens", timeout=10,
                                           headers={"X-Auth-Token": new, "X-Subject-Token": new})]
                if self.credential:
                    checks.append(requests.get(self.url + "/credentials/" + self.credential["id"], timeout=10,
                                               headers={"X-Auth-Token": new}))
                for resp in checks:
                    if resp.status_code != 200:
                        self.failures.append("%s %s" % (resp.status_code, resp.text[:200]))
                if self.credential and checks[-1].ok and \
                        checks[-1].json()["credential"]["blob"] != self.credential["blob"]:
                    self.failures.append("credential blob changed")
            except requests.RequestException as exc:  # a refused connection is a failure too
                self.failures.append(str(exc))
            self.requests += 1
            time.sleep(0.05)

    def finish(self):
        self.stop.set()
        self.join(timeout=30)
        return self.requests, self.failures


def password_auth(password):
    return {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": password}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}


def korc_auth():
    """K-ORC's application credential (its clouds.yaml Secret), as K-ORC authenticates."""
    clouds = yaml.safe_load(secret_data(CONTROL_PLANE, "k-orc-clouds-yaml")["clouds.yaml"])["clouds"]
    (auth,) = [cloud["auth"] for cloud in clouds.values()]
    return {"auth": {"identity": {"methods": ["application_credential"], "application_credential": {
        "id": auth["application_credential_id"], "secret": auth["application_credential_secret"]}}}}


def admin_password():
    return secret_data(CONTROL_PLANE, "keystone-admin-credentials")["password"]


def client(with_credential=False, auth=None, reauth=False):
    url = keystone_endpoint(CONTROL_PLANE)
    found = Client(url, auth or password_auth(admin_password()), reauth=reauth)
    if with_credential:
        token = found.token()
        user = requests.get(url + "/auth/tokens", headers={"X-Auth-Token": token, "X-Subject-Token": token},
                            timeout=10).json()["token"]["user"]["id"]
        resp = requests.post(url + "/credentials", headers={"X-Auth-Token": token}, timeout=10, json={"credential": {
            "type": "totp", "user_id": user, "blob": "rotation-test-%d" % time.time()}})
        resp.raise_for_status()
        found.credential = resp.json()["credential"]
    found.start()
    return found


def test_fernet_rotation_fails_no_client_and_retires_the_old_key_after_max_active_keys(region):
    before = keys("fernet")
    loop = client()
    rc, out = rotate("fernet", "fernet-1")
    requests_made, failed = loop.finish()
    result = the_task(out)
    assert rc == 0 and result["changed"] and result["started"] == ["keystone-fernet-rotate-fernet-1"], result
    assert requests_made > 5 and failed == [], failed
    after = keys("fernet")
    assert len(after) == 3 and after != before
    assert before["0"] in after.values(), "the staged key became the primary key"
    assert readable(loop.old, after), "a token from before the rotation is still valid"
    # maxActiveKeys 3: a second rotation retires the key the old token was made with.
    rc, unused = rotate("fernet", "fernet-2")
    assert rc == 0
    assert not readable(loop.old, keys("fernet")), "the retired key no longer reads the old token"


def test_credential_rotation_migrates_stored_credentials_without_a_failed_read(region):
    before = keys("credential")
    loop = client(with_credential=True)
    rc, out = rotate("credential", "credential-1")
    requests_made, failed = loop.finish()
    assert rc == 0 and the_task(out)["changed"]
    assert requests_made > 5 and failed == [], failed
    after = keys("credential")
    assert len(after) == 3 and after != before and before["0"] in after.values()


def test_the_same_rotation_id_rotates_nothing_and_check_mode_writes_nothing(region):
    fernet = keys("fernet")
    rc, out = rotate("keys", "fernet-1")  # fernet-1 is done; its credential Job does not exist yet
    result = the_task(out)
    assert rc == 0 and result["started"] == ["keystone-credential-rotate-fernet-1"]
    assert keys("fernet") == fernet
    stamp = completed_at("credential")
    rc, out = rotate("keys", "fernet-1")
    assert rc == 0 and not the_task(out)["changed"] and out["stats"][REGION_HOST]["changed"] == 0
    assert completed_at("credential") == stamp
    rc, out = rotate("keys", "planned", "--check")
    assert rc == 0 and [r["state"] for r in the_task(out)["rotations"]] == ["absent", "absent"]
    assert get_object(REGION_HOST, "-n", REGION_NAMESPACE, "job", "keystone-fernet-rotate-planned") is None


def test_bad_input_is_refused_before_any_write(region):
    rc, out = rotate("tokens", "x1")
    assert rc != 0 and "rotate=<fernet|credential|keys|admin-password|bmc-credentials>" in json.dumps(out)
    rc, out = rotate("fernet", "Not_A_Label")
    assert rc != 0 and "rotation_id" in the_task(out)["msg"]


def test_a_refused_rotation_fails_naming_it_and_a_failing_job_is_named_at_the_timeout(region):
    fernet = keys("fernet")
    with standins_restored():
        update_standins(lambda data: data.setdefault("keystones", {}).update(
            {"openstack/keystone": {"reject_rotation": "fernet", "fail_rotation": "credential"}}))
        time.sleep(1)
        rc, out = rotate("fernet", "rejected")
        msg = the_task(out)["msg"]
        assert rc != 0 and "RotationRejected" in msg and "duplicate keys detected" in msg, msg
        assert keys("fernet") == fernet, "a rejected rotation leaves the keys alone"
        staging = get_object(REGION_HOST, "-n", REGION_NAMESPACE, "secret", "keystone-fernet-keys-rotation",
                             missing_ok=False)
        assert not staging.get("data") and "cobaltcore.c5c3.io/rotation-completed-at" not in \
            (staging["metadata"].get("annotations") or {}), "the operator cleared the rejected payload"
        rc, out = rotate("credential", "failing", cobaltcore_rotate_timeout=20)
        msg = the_task(out)["msg"]
        assert rc != 0 and "keystone-credential-rotate-failing" in msg and "failed pods" in msg, msg
    rc, out = rotate("fernet", "rejected")
    assert rc != 0 and "failed before, nothing was started" in the_task(out)["msg"]
    lab_kubectl(REGION_HOST, "-n", REGION_NAMESPACE, "delete", "job", "keystone-credential-rotate-failing",
                "--wait=false")


def test_no_key_appears_in_verbose_output(region):
    before = {kind: keys(kind) for kind in ("fernet", "credential")}
    rc, out, text = run_verbose(ROTATE, "-e", "rotate=keys", "-e", "rotation_id=verbose")
    assert rc == 0 and the_task(out)["changed"]
    after = {kind: keys(kind) for kind in ("fernet", "credential")}
    shown = [key for kind in after for key in list(before[kind].values()) + list(after[kind].values())
             if key in text or base64.b64encode(key.encode()).decode() in text]
    assert shown == []


def test_the_admin_password_rotates_without_failing_korcs_credential_and_the_old_one_is_refused(region):
    old = admin_password()
    url = keystone_endpoint(CONTROL_PLANE)
    loop = client(auth=korc_auth(), reauth=True)
    rc, out, text = run_verbose(ROTATE, "-e", "rotate=admin-password", "-e", "rotation_id=password-1")
    requests_made, failed = loop.finish()
    result = task_result(out, "Rotate the Keystone admin password")
    assert rc == 0 and result["changed"], result
    new = admin_password()
    assert new != old and result["rotations"][0]["old_password_refused"] is True
    assert requests_made > 5 and failed == [], failed
    print("\nadmin password rotation: %d requests, %d authentications again after a revoked token"
          % (requests_made, loop.reauthentications))
    assert requests.post(url + "/auth/tokens", json=password_auth(old), timeout=10).status_code == 401
    assert requests.post(url + "/auth/tokens", json=password_auth(new), timeout=10).status_code == 201
    assert [p for p in (old, new, base64.b64encode(new.encode()).decode()) if p in text] == []
    rc, out = rotate("admin-password", "password-1")
    assert rc == 0 and not task_result(out, "Rotate the Keystone admin password")["changed"]
    assert admin_password() == new
    # The collection's own Keystone modules read the password from the Secret: phase 5 runs on with the new one.
    rc, out, unused = _play(REPO / "playbooks" / "keystone.yml")
    assert rc == 0 and out["stats"][REGION_HOST]["failures"] == 0


def service_auth(name, password):
    return {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": name, "domain": {"name": "Default"}, "password": password}}},
        "scope": {"project": {"name": "service", "domain": {"name": "Default"}}}}}


def application_credential_auth(service):
    """A service's application credential (its <service>-keystone-credentials Secret), as the service authenticates."""
    clouds = yaml.safe_load(secret_data(CONTROL_PLANE, "%s-keystone-credentials" % service)["clouds.yaml"])["clouds"]
    (auth,) = [cloud["auth"] for cloud in clouds.values()]
    return {"auth": {"identity": {"methods": ["application_credential"], "application_credential": {
        "id": auth["application_credential_id"], "secret": auth["application_credential_secret"]}}}}


def service_passwords(suffix=""):
    """{user: password} of the service users' password Secrets of one version."""
    users = objects(REGION_HOST, "users.openstack.k-orc.cloud", REGION_NAMESPACE)
    names = [u["metadata"]["name"] for u in users if (u["spec"].get("resource") or {}).get("passwordRef")]
    return dict((name, secret_data(CONTROL_PLANE, "%s-keystone-user%s" % (name, suffix))["password"]) for name in names)


def password_secrets():
    return sorted(o["metadata"]["name"] for o in objects(REGION_HOST, "secrets", REGION_NAMESPACE)
                  if "-keystone-user" in o["metadata"]["name"])


def test_a_raised_service_password_version_rotates_every_service_users_password_through_korc(region):
    """cobaltcore_service_password_version 1: new Secrets, K-ORC changes each password, a service's application
    credential keeps working, the old passwords are refused and their Secrets removed; back to 0 the same way."""
    url = keystone_endpoint(CONTROL_PLANE)
    old = service_passwords()
    assert set(old) >= {"nova", "glance"}, old
    loop = client(auth=application_credential_auth("nova"), reauth=True)
    try:
        rc, out, text = run_verbose(KEYSTONE, "-e", "cobaltcore_service_password_version=1")
    finally:
        requests_made, failed = loop.finish()
    assert rc == 0, failures(out)
    new = service_passwords("-v1")
    assert sorted(new) == sorted(old) and all(new[n] != old[n] for n in old)
    assert password_secrets() == sorted("%s-keystone-user-v1" % n for n in new)
    for user in objects(REGION_HOST, "users.openstack.k-orc.cloud", REGION_NAMESPACE):
        if user["spec"]["resource"].get("passwordRef"):
            assert user["status"]["resource"]["appliedPasswordRef"] == "%s-keystone-user-v1" % user["metadata"]["name"]
    assert requests_made > 5 and failed == [], failed
    print("\nservice password rotation: %d requests, %d authentications again after a revoked token"
          % (requests_made, loop.reauthentications))
    for name in old:
        assert requests.post(url + "/auth/tokens", json=service_auth(name, old[name]), timeout=10).status_code == 401
        assert requests.post(url + "/auth/tokens", json=service_auth(name, new[name]), timeout=10).status_code == 201
    assert [p for p in list(old.values()) + list(new.values()) if p in text] == []
    rc, out, unused = _play(KEYSTONE, "-e", "cobaltcore_service_password_version=1")
    assert rc == 0 and out["stats"][REGION_HOST]["changed"] == 0, out["stats"]
    # Back to the inventory's version 0 (the region is shared): a rotation to new passwords again. A lower version
    # retires nothing: the Secrets of version 1 go by hand once nothing names them (K-ORC's deletion guard keeps a
    # Secret deleted while named until its next event), and the next run records the cluster without them.
    rc, out, unused = _play(KEYSTONE)
    assert rc == 0, failures(out)
    again = service_passwords()
    assert all(again[n] not in (old[n], new[n]) for n in old)
    assert requests.post(url + "/auth/tokens", json=service_auth("nova", again["nova"]), timeout=10).status_code == 201
    lab_kubectl(REGION_HOST, "-n", REGION_NAMESPACE, "delete", "secret", *["%s-keystone-user-v1" % n for n in new])
    assert password_secrets() == sorted("%s-keystone-user" % n for n in new)
    for changed in (None, 0):
        rc, out, unused = _play(KEYSTONE)
        assert rc == 0 and changed in (None, out["stats"][REGION_HOST]["changed"]), out["stats"]


def keystone_beside_a_client(auth, *args):
    """keystone.yml -vvv with args while a client authenticates with auth (read again for every token) in a loop:
    (rc, out, text, requests made, failed requests)."""
    loop = client(auth=auth, reauth=True)
    try:
        rc, out, text = run_verbose(KEYSTONE, *args)
    finally:
        requests_made, failed = loop.finish()
    return rc, out, text, requests_made, failed


def service_credentials():
    """{service: (its K-ORC ApplicationCredentials' names, the credential its <service>-keystone-credentials holds)}."""
    names = {}
    for credential in objects(REGION_HOST, "applicationcredentials.openstack.k-orc.cloud", REGION_NAMESPACE):
        names.setdefault(credential["spec"]["resource"]["userRef"], []).append(credential["metadata"]["name"])
    return dict((service, (sorted(found), application_credential_auth(service)["auth"]["identity"][
        "application_credential"])) for service, found in names.items())


def credential_auth(credential):
    return {"auth": {"identity": {"methods": ["application_credential"], "application_credential": credential}}}


def test_a_raised_service_credential_version_switches_every_services_secret_to_a_new_credential(region):
    """cobaltcore_service_credential_version 1: K-ORC creates <service>-v1, the Secret the service CR names switches
    to it in one write, a client reading that Secret for every token never fails, and the old credentials are deleted
    after the grace; back to 0, the version 1 objects go by hand and the next run is changed=0."""
    url = keystone_endpoint(CONTROL_PLANE)
    old = service_credentials()
    assert set(old) >= {"nova", "glance"} and all(names == [s] for s, (names, unused) in old.items()), old
    rc, out, text, requests_made, failed = keystone_beside_a_client(
        lambda: application_credential_auth("nova"), "-e", "cobaltcore_service_credential_version=1",
        "-e", "keystone_bootstrap_service_credential_grace=5")
    assert rc == 0, failures(out)
    new = service_credentials()
    assert sorted(new) == sorted(old) and all(new[s][0] == [s + "-v1"] for s in new), new
    assert requests_made > 5 and failed == [], failed
    for service in old:
        assert new[service][1]["id"] != old[service][1]["id"] and new[service][1]["secret"] != old[service][1]["secret"]
        # Gone in Keystone (K-ORC deleted it with its object): 404, as Keystone answers a deleted credential.
        assert requests.post(url + "/auth/tokens", json=credential_auth(old[service][1]), timeout=10).status_code in (
            401, 404)
        assert requests.post(url + "/auth/tokens", json=credential_auth(new[service][1]), timeout=10).status_code == 201
    assert [c for s in old for c in (old[s][1]["secret"], new[s][1]["secret"]) if c in text] == []
    versioned = sorted(o["metadata"]["name"] for o in objects(REGION_HOST, "secrets", REGION_NAMESPACE)
                       if o["metadata"]["name"].endswith("-keystone-credentials-v1"))
    assert versioned == sorted("%s-keystone-credentials-v1" % s for s in old)
    rc, out, unused = _play(KEYSTONE, "-e", "cobaltcore_service_credential_version=1")
    assert rc == 0 and out["stats"][REGION_HOST]["changed"] == 0, out["stats"]
    # Back to the inventory's version 0 (the region is shared): K-ORC creates <service> again; a lower version
    # retires nothing, so version 1's objects go by hand, and the next run records the cluster without them.
    rc, out, unused = _play(KEYSTONE)
    assert rc == 0, failures(out)
    back = service_credentials()
    assert all(back[s][0] == sorted([s, s + "-v1"]) and back[s][1]["id"] not in (old[s][1]["id"], new[s][1]["id"])
               for s in back), back
    assert requests.post(url + "/auth/tokens", json=credential_auth(back["nova"][1]), timeout=10).status_code == 201
    lab_kubectl(REGION_HOST, "-n", REGION_NAMESPACE, "delete", "applicationcredentials.openstack.k-orc.cloud",
                *["%s-v1" % s for s in old])
    lab_kubectl(REGION_HOST, "-n", REGION_NAMESPACE, "delete", "secret", *versioned)
    for changed in (None, 0):
        rc, out, unused = _play(KEYSTONE)
        assert rc == 0 and changed in (None, out["stats"][REGION_HOST]["changed"]), out["stats"]


def korc_credential_id():
    clouds = yaml.safe_load(secret_data(CONTROL_PLANE, "k-orc-clouds-yaml")["clouds.yaml"])["clouds"]
    (auth,) = [cloud["auth"] for cloud in clouds.values()]
    return auth["application_credential_id"]


def test_a_raised_korc_credential_version_mints_korc_a_new_credential_and_deletes_the_old_one(region):
    """cobaltcore_korc_credential_version 1: K-ORC's Secret gets a new application credential; a client reading the
    Secret for every token (as K-ORC reads it for every reconcile) never fails; the old credential is refused at the
    end of the run; K-ORC goes on reconciling with the new one."""
    old_auth, old_id = korc_auth(), korc_credential_id()
    url = keystone_endpoint(CONTROL_PLANE)
    rc, out, text, requests_made, failed = keystone_beside_a_client(
        korc_auth, "-e", "cobaltcore_korc_credential_version=1", "-e", "keystone_bootstrap_korc_replaced_grace=5")
    assert rc == 0, failures(out)
    minted = task_results(out, "Mint K-ORC's application credentials and write their clouds.yaml Secrets")
    (cluster,) = minted[REGION_HOST]["clusters"]
    assert cluster["minted"] and cluster["deleted_application_credentials"] == [old_id], cluster
    assert korc_credential_id() != old_id and requests_made > 5 and failed == [], failed
    # Keystone answers 404 for an application credential that is gone.
    assert requests.post(url + "/auth/tokens", json=old_auth, timeout=10).status_code in (401, 404)
    assert requests.post(url + "/auth/tokens", json=korc_auth(), timeout=10).status_code == 201
    assert old_auth["auth"]["identity"]["application_credential"]["secret"] not in text
    assert korc_auth()["auth"]["identity"]["application_credential"]["secret"] not in text
    rc, out, unused = _play(KEYSTONE, "-e", "cobaltcore_korc_credential_version=1")
    assert rc == 0 and out["stats"][REGION_HOST]["changed"] == 0, out["stats"]
    # Back to the inventory's version 0 (the region is shared): one more rotation, then nothing to do.
    newer = korc_credential_id()
    rc, out, unused = _play(KEYSTONE, "-e", "keystone_bootstrap_korc_replaced_grace=5")
    assert rc == 0 and korc_credential_id() not in (old_id, newer), failures(out)
    rc, out, unused = _play(KEYSTONE)
    assert rc == 0 and out["stats"][REGION_HOST]["changed"] == 0, out["stats"]


TENANTS = REPO / "playbooks" / "tenants.yml"
CEPH_TENANT = "lab-tenant-b"  # on two storage pools: a Ceph user on each


def ceph_consumers(tenant):
    """[(storage pool, monitors, Ceph user, Secret)] of each RBD backend of the tenant's ControlPlane, as it names them."""
    cp = get_object(REGION_HOST, "-n", "openstack-" + tenant, "controlplane.c5c3.io", tenant, missing_ok=False)
    return [(b["storageCluster"], b["monitors"], b["user"], b["secretRef"])
            for b in cp["spec"]["openstack"]["cinder"]["backends"] if b.get("type") == "rbd"]


def ceph_key(tenant, secret):
    return (secret_data(CONTROL_PLANE, secret, "openstack-" + tenant) or {}).get("userKey")


def cinder_rollout(tenant):
    """The tenant's Cinder CR as its pods run it: (whether its operator rolled its generation out, {backend: (Ceph
    user, Secret)})."""
    cinder = get_object(REGION_HOST, "-n", "openstack-" + tenant, "cinders.cinder.openstack.c5c3.io", "cinder",
                        missing_ok=False)
    status = cinder.get("status") or {}
    ready = status.get("observedGeneration") == cinder["metadata"]["generation"] and any(
        c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])
    return ready, dict((b["name"], (b["rbd"]["cephClientRef"]["name"], b["rbd"]["cephSecretRef"]["name"]))
                       for b in cinder["spec"].get("backends") or [])


class CephConsumer(threading.Thread):
    """A tenant's Cinder in a loop: each round connects to each backend's Ceph with the user and the Secret (read
    again) its pods run - those of the Cinder CR's generation its operator last rolled out, as a Deployment keeps its
    old pods until the new ones run - and writes and reads an object in the tenant's volumes pool."""

    def __init__(self, tenant):
        super().__init__(daemon=True)
        self.tenant, self.rounds, self.failures, self.users = tenant, 0, [], set()
        self.monitors = dict((name, (pool, monitors)) for pool, monitors, name in (
            (b["storageCluster"], b["monitors"], b["name"]) for b in get_object(
                REGION_HOST, "-n", "openstack-" + tenant, "controlplane.c5c3.io", tenant,
                missing_ok=False)["spec"]["openstack"]["cinder"]["backends"] if b.get("type") == "rbd"))
        ready, self.running = cinder_rollout(tenant)
        assert ready and sorted(self.running) == sorted(self.monitors), (ready, self.running, self.monitors)
        self.stop = threading.Event()

    def run(self):
        from regionlab import ceph
        while not self.stop.is_set():
            try:
                ready, backends = cinder_rollout(self.tenant)
                if ready:
                    self.running = backends
                for name, (user, secret) in sorted(self.running.items()):
                    pool, monitors = self.monitors[name]
                    client = ceph.connect(monitors, "client." + user, ceph_key(self.tenant, secret))
                    try:
                        with client.open_ioctx(self.tenant + "-volumes") as io:
                            io.write_full("rotation-test", user.encode())
                            assert io.read("rotation-test") == user.encode()
                    finally:
                        client.shutdown()
                    self.users.add((pool, user))
            except Exception as exc:  # noqa: BLE001 - any error is a failed round
                self.failures.append("%s: %s" % (type(exc).__name__, exc))
            self.rounds += 1
            time.sleep(0.1)

    def finish(self):
        self.stop.set()
        self.join(timeout=60)
        return self.rounds, self.failures


def ceph_users(pool):
    from regionlab import ceph
    return {entry["entity"] for entry in ceph.Cluster(pool).command("auth ls")["auth_dump"]}


def test_a_raised_ceph_client_version_gives_every_tenant_a_new_ceph_user_and_deletes_the_old_one(region):
    """cobaltcore_ceph_client_version 1: each tenant's ControlPlane switches to the Ceph user openstack-<t>-v1 and its
    Secret, a consumer that reads them for every connection never fails, and the old users are deleted once the
    ControlPlanes run the new one; back to 0, the version 1 objects go by hand and the next run is changed=0."""
    tenants_dir = "cobaltcore_tenants_dir=%s" % region.tenants_dir
    before = ceph_consumers(CEPH_TENANT)
    assert [(pool, user) for pool, unused, user, unused in before] == [
        ("st-pool-a", "openstack-" + CEPH_TENANT), ("st-pool-b", "openstack-" + CEPH_TENANT)], before
    old_keys = dict((pool, ceph_key(CEPH_TENANT, secret)) for pool, unused, unused, secret in before)
    consumer = CephConsumer(CEPH_TENANT)
    consumer.start()
    try:
        rc, out, text = run_verbose(TENANTS, "-e", tenants_dir, "-e", "cobaltcore_ceph_client_version=1",
                                    "-e", "tenants_ceph_client_grace=5")
    finally:
        rounds, failed = consumer.finish()
    assert rc == 0, failures(out)
    print("\nCeph client rotation: %d consumer rounds" % rounds)
    assert rounds > 5 and failed == [], failed
    after = ceph_consumers(CEPH_TENANT)
    assert [(pool, user, secret) for pool, unused, user, secret in after] == [
        ("st-pool-a", "openstack-%s-v1" % CEPH_TENANT, "ceph-client-%s-v1" % CEPH_TENANT),
        ("st-pool-b", "openstack-%s-v1" % CEPH_TENANT, "ceph-client-%s-st-pool-b-v1" % CEPH_TENANT)], after
    # The consumer ran with both users: the old one until the switch, the new one after.
    assert {user for unused, user in consumer.users} == {"openstack-" + CEPH_TENANT, "openstack-%s-v1" % CEPH_TENANT}
    from regionlab import ceph
    for pool, monitors, _user, _secret in before:
        users = ceph_users(pool)
        assert "client.openstack-%s-v1" % CEPH_TENANT in users and "client.openstack-" + CEPH_TENANT not in users
        with pytest.raises((ceph.rados().Error, ceph.CephError)):
            ceph.connect(monitors, "client.openstack-" + CEPH_TENANT, old_keys[pool], timeout=5).shutdown()
        assert [c["metadata"]["name"] for c in objects(pool, "cephclients.ceph.rook.io", "rook-ceph")
                if c["metadata"]["name"].startswith("openstack-%s" % CEPH_TENANT)] == ["openstack-%s-v1" % CEPH_TENANT]
    secrets = sorted(o["metadata"]["name"] for o in objects(REGION_HOST, "secrets", "openstack-" + CEPH_TENANT)
                     if o["metadata"]["name"].startswith("ceph-client-"))
    assert secrets == ["ceph-client-%s-st-pool-b-v1" % CEPH_TENANT, "ceph-client-%s-v1" % CEPH_TENANT]
    new_keys = [ceph_key(CEPH_TENANT, secret) for unused, unused, unused, secret in after]
    assert [k for k in list(old_keys.values()) + new_keys if k in text] == []
    rc, out, unused = _play(TENANTS, "-e", tenants_dir, "-e", "cobaltcore_ceph_client_version=1")
    assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    # Back to the inventory's version 0 (the region is shared): Rook makes the users openstack-<t> anew; a lower
    # version retires nothing, so version 1's CephClients and Secrets go by hand.
    rc, out, unused = _play(TENANTS, "-e", tenants_dir)
    assert rc == 0, failures(out)
    assert [user for unused, unused, user, unused in ceph_consumers(CEPH_TENANT)] == ["openstack-" + CEPH_TENANT] * 2
    for pool in ("st-pool-a", "st-pool-b"):
        versioned = [c["metadata"]["name"] for c in objects(pool, "cephclients.ceph.rook.io", "rook-ceph")
                     if c["metadata"]["name"].endswith("-v1")]
        assert versioned, pool
        lab_kubectl(pool, "-n", "rook-ceph", "delete", "cephclients.ceph.rook.io", "--wait=true", *versioned)
    secrets = json.loads(lab_kubectl(REGION_HOST, "get", "secrets", "-A", "-o", "json").stdout)["items"]
    versioned = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in secrets
                 if o["metadata"]["name"].startswith("ceph-client-") and o["metadata"]["name"].endswith("-v1")]
    assert len(versioned) == 6, versioned  # the region's four tenants, two of them on two storage pools
    for namespace, name in versioned:
        lab_kubectl(REGION_HOST, "-n", namespace, "delete", "secret", name)
    rc, out, unused = _play(TENANTS, "-e", tenants_dir)
    assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]


BMC_SECRET = "bmc-lab-rack-1"
BMC_USER = "lab-bmc-admin"


def bmc_login():
    """The login the BMCSecret holds, as metal-operator reads it for each request."""
    secret = get_object("baremetal", "bmcsecret", BMC_SECRET, missing_ok=False)
    return tuple(base64.b64decode(secret["data"][key]).decode() for key in ("username", "password"))


def lab_bmcs():
    """The Redfish systems URL of every lab BMC (their BMC objects' addresses)."""
    return ["http://%s:%d/redfish/v1/Systems" % (b["spec"]["access"]["ip"], b["spec"]["protocol"]["port"])
            for b in objects("baremetal", "bmcs")]


class BMCConsumer(threading.Thread):
    """metal-operator's requests: each round reads the BMCSecret and logs in to every lab BMC with it."""

    def __init__(self):
        super().__init__(daemon=True)
        self.urls, self.rounds, self.failures = lab_bmcs(), 0, []
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            login = bmc_login()
            for url in self.urls:
                resp = requests.get(url, auth=login, timeout=10)
                if resp.status_code != 200:
                    self.failures.append("%s %s as %s" % (resp.status_code, url, login[0]))
            self.rounds += 1
            time.sleep(0.05)

    def finish(self):
        self.stop.set()
        self.join(timeout=60)
        return self.rounds, self.failures


def rotate_bmcs(rotation_id, password=None, verbose=False, *args):
    extra = ["-e", json.dumps({"rotate": "bmc-credentials", "rotation_id": rotation_id, "cobaltcore_rotate_bmc_grace": 2})]
    if password:
        credentials = {"lab-rack-1": {"username": BMC_USER, "password": password}}
        extra += ["-e", json.dumps({"cobaltcore_bmc_credentials": credentials})]
    if verbose:
        return run_verbose(ROTATE, *(extra + list(args)))
    rc, out, unused = _play(ROTATE, *(extra + list(args)))
    return rc, out, None


def test_bmc_credentials_rotate_through_a_handover_account_without_a_refused_login(region):
    """rotate=bmc-credentials with a new password in the inventory: metal-operator's requests (the BMCSecret read for
    each) are never refused while every BMC gets the new password; the old one and the handover account are refused at
    the end; the same again changes nothing; back to the lab's password the same way."""
    original = (config.STATE / "secrets" / "bmc-lab-rack-1").read_text().strip()
    assert bmc_login() == (BMC_USER, original)
    new = "Rotated-%s-9x" % os.urandom(6).hex()
    rc, out, unused = rotate_bmcs("bmc-plan", new, False, "--check")
    assert rc == 0 and bmc_login()[1] == original, failures(out)
    (planned,) = task_results(out, "Set the inventory's BMC passwords on the BMCs and in their BMCSecrets "
                                   "(rotation bmc-plan)")["baremetal"]["secrets"]
    assert planned["steps"] == ["start"] and len(planned["bmcs"]) == len(lab_bmcs())
    consumer = BMCConsumer()
    consumer.start()
    try:
        rc, out, text = rotate_bmcs("bmc-1", new, True)
    finally:
        rounds, failed = consumer.finish()
    assert rc == 0, failures(out)
    print("\nBMC credential rotation: %d consumer rounds over %d BMCs" % (rounds, len(consumer.urls)))
    assert rounds > 5 and failed == [], failed[:5]
    assert bmc_login() == (BMC_USER, new)
    for url in lab_bmcs():
        assert requests.get(url, auth=(BMC_USER, new), timeout=10).status_code == 200
        assert requests.get(url, auth=(BMC_USER, original), timeout=10).status_code == 401
        assert requests.get(url, auth=("c5c3-handover", new), timeout=10).status_code == 401
    assert original not in text and new not in text
    assert base64.b64encode(new.encode()).decode() not in text
    rc, out, unused = rotate_bmcs("bmc-1", new)
    assert rc == 0 and out["stats"]["baremetal"]["changed"] == 0, out["stats"]
    # Phase 1 with the new password in the inventory: the BMCSecret is already as it says.
    rc, out, unused = _play(REPO / "playbooks" / "baremetal.yml", "-e", json.dumps(
        {"cobaltcore_bmc_credentials": {"lab-rack-1": {"username": BMC_USER, "password": new}}}))
    assert rc == 0 and all(s["changed"] == 0 for s in out["stats"].values()), out["stats"]
    # Back to the lab's password (the lab's BMCs start with it again after a restart).
    rc, out, unused = rotate_bmcs("bmc-2")
    assert rc == 0, failures(out)
    assert bmc_login() == (BMC_USER, original)
    assert all(requests.get(url, auth=(BMC_USER, new), timeout=10).status_code == 401 for url in lab_bmcs())
    for bmc in objects("baremetal", "bmcs"):
        assert bmc["status"]["state"] == "Enabled", bmc["status"]


def test_the_rotation_interval_reaches_the_cronjobs(region):
    def schedules():
        found = get_object(REGION_HOST, "-n", REGION_NAMESPACE, "cronjobs", missing_ok=False)["items"]
        # The keystone-operator's (beside them: the scheduled database backup's).
        return sorted((o["metadata"]["name"], o["spec"]["schedule"]) for o in found
                      if o["metadata"]["name"].startswith("keystone-"))

    control_plane = REPO / "playbooks" / "control_plane.yml"
    try:
        rc, out, unused = _play(control_plane, "-e", "cobaltcore_keystone_key_rotation_interval=24h")
        assert rc == 0
        wait_truthy(lambda: schedules() == [("keystone-credential-rotate", "0 0 * * *"),
                                            ("keystone-fernet-rotate", "0 0 * * *")], "daily rotation CronJobs")
        rc, out, unused = _play(control_plane, "-e", "cobaltcore_keystone_key_rotation_interval=25h")
        assert rc != 0 and "whole number of days" in json.dumps(out)
    finally:
        rc, out, unused = _play(control_plane)
        assert rc == 0
    wait_truthy(lambda: schedules() == [("keystone-credential-rotate", "0 0 * * 0"),
                                        ("keystone-fernet-rotate", "0 0 * * 0")], "weekly rotation CronJobs")
