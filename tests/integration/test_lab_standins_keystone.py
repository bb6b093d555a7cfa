"""The c5c3-operator and keystone-operator stand-ins on the lab's control-plane API server.

Two ControlPlanes in two namespaces (standin-ks-test-<token>-a and -b) give two Keystone CRs and
two real Keystones, brought up side by side. The c5c3-operator projects each Keystone CR's
`bootstrap` from its ControlPlane (region, A's public endpoint, the admin password Secret) as
upstream does, server-side as `cobaltcore-operator` with force, and takes back a value someone else
wrote. A's Keystone first waits for its database credentials, then for its admin password
(upstream's SecretsReady: nothing else runs before); B's Secrets are there from the start, so it is
bootstrapped at once, loses and gets back its database password while Ready, and gets a new admin
password while A's bootstrap runs. At the end, at the same moment, A's Keystone dies and cannot
start again and B's namespace is deleted (the waits overlap); then A's ControlPlane and Keystone CR
are deleted. The module sets the stand-ins' `keystone` and `control_plane` delays to 0 (nothing
here plays an operator itself) and restores standins.yaml afterwards.
"""

import base64
import hashlib
import re
import socket
import time
import uuid

import pytest
import yaml
from keystoneauth1 import exceptions as ks_exceptions
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from conftest import ControlPlaneApi as Api, standins_restored, wait_truthy
from regionlab import config, processes, standins
from regionlab.standins import keystones

TOKEN = uuid.uuid4().hex[:5]
PREFIX = "standin-ks-test-%s" % TOKEN
NS = {"a": PREFIX + "-a", "b": PREFIX + "-b"}
PASSWORDS = {"a": "a-" + uuid.uuid4().hex, "b": "b-" + uuid.uuid4().hex, "b2": "b2-" + uuid.uuid4().hex}
DB_PASSWORD = "db-" + uuid.uuid4().hex
SECRET = "keystone-admin-credentials"
DB_SECRET = "keystone-db-credentials"
C5C3 = "/apis/c5c3.io/v1alpha1"
KEYSTONE = "/apis/keystone.openstack.c5c3.io/v1alpha1"
COLLECTION = "c5c3.cobaltcore"
OPERATOR = "cobaltcore-operator"  # upstream c5c3-operator's field manager
REGIONS = {"a": "LabA", "b": "LabB"}
PUBLIC_A = "https://keystone.standin-a.lab.cobaltcore.test/v3"  # A's ControlPlane names one, B's none
SETUP = 240  # seconds: keystone-manage db_sync, key setup and the API server on a loaded 2-core machine
DELAYS = {"keystone": 0.0, "control_plane": 0.0}


def wait_for(check, what, timeout=60.0):
    return wait_truthy(check, what, timeout, interval=0.25)


def condition(obj, ctype):
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c["type"] == ctype), None)


def has(obj, ctype, status, reason=None):
    cond = condition(obj, ctype)
    return bool(cond and cond["status"] == status and (reason is None or cond["reason"] == reason)
                and cond.get("observedGeneration") == obj["metadata"]["generation"]) and obj


def secret(namespace, name, **values):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in values.items()}}


def control_plane(key, replicas=1):
    keystone = {"enabled": True, "replicas": replicas}
    if key == "a":
        keystone["publicEndpoint"] = PUBLIC_A
    return {"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane",
            "metadata": {"name": "cp", "namespace": NS[key]},
            # Keystone only: the other services seed 003 enables by default are switched off.
            "spec": {"services": dict({"keystone": keystone},
                                      **{name: {"enabled": False} for name in ("glance", "placement", "nova", "neutron",
                                                                               "cinder")}),
                     "global": {"region": REGIONS[key]}}}


def bootstrap_owners(cr):
    """{field of spec.bootstrap: the field managers that own it}."""
    owners = {}
    for entry in cr["metadata"].get("managedFields") or []:
        fields = (((entry.get("fieldsV1") or {}).get("f:spec") or {}).get("f:bootstrap") or {})
        for field in fields:
            if field.startswith("f:"):
                owners.setdefault(field[2:], set()).add(entry["manager"])
    return owners


def admin_session(url, password):
    auth = v3.Password(auth_url=url, username="admin", password=password, project_name="admin",
                       user_domain_name="Default", project_domain_name="Default")
    return ks_session.Session(auth=auth)


def update_settings(**changes):
    """Merge changes (top-level keys; dicts are merged one level deep) into the lab's standins.yaml."""
    try:
        data = yaml.safe_load(config.STANDINS.read_text()) if config.STANDINS.exists() else {}
    except yaml.YAMLError:
        data = {}
    data = data if isinstance(data, dict) else {}
    for key, value in changes.items():
        data[key] = dict(data.get(key) or {}, **value) if isinstance(value, dict) else value
    config.STANDINS.write_text(yaml.safe_dump(data))


@pytest.fixture(scope="module")
def env(lab, region):  # the Keystone CRD comes from phase 3
    with standins_restored():
        update_settings(delays=DELAYS)
        api = Api()
        for namespace in NS.values():
            api.ok("POST", "/api/v1/namespaces",
                   {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        # B's Secrets before its ControlPlane, as the collection's phase 5 leaves a region; A gets none yet.
        api.ok("POST", "/api/v1/namespaces/%s/secrets" % NS["b"], secret(NS["b"], SECRET, password=PASSWORDS["b"]))
        api.ok("POST", "/api/v1/namespaces/%s/secrets" % NS["b"],
               secret(NS["b"], DB_SECRET, username="keystone", password=DB_PASSWORD))
        for key, namespace in NS.items():
            api.ok("POST", C5C3 + "/namespaces/%s/controlplanes" % namespace, control_plane(key))
        yield api
        for namespace in NS.values():  # B's is going already; after a failure, both go here
            api.call("DELETE", "/api/v1/namespaces/" + namespace)
        # The namespaces go on their own; their Keystones must be stopped and forgotten.
        wait_for(lambda: not [k for k in keystones.read_registry() if k.startswith(PREFIX)], "test Keystones stopped",
                 60)
        assert not [n for n in processes.running()
                    if n.startswith((keystones.PREFIX + PREFIX, keystones.CACHE_PREFIX + PREFIX))]


def keystone_cr(api, key):
    return api.get(KEYSTONE + "/namespaces/%s/keystones/keystone" % NS[key])


def ready_keystone(api, key):
    return wait_for(lambda: has(keystone_cr(api, key), "Ready", "True", "AllReady"), "Keystone %s Ready" % key, SETUP)


# ---------------------------------------------------------------------------

def test_standins_run(env):
    info = standins.status(config.clusters())
    for name in ("c5c3-operator-standin", "keystone-operator-standin"):
        assert info[name]["ready"], info
        assert name in processes.running()


def test_controlplane_yields_the_keystone_cr_with_the_bootstrap_it_projects(env):
    cp = env.get(C5C3 + "/namespaces/%s/controlplanes/cp" % NS["a"])
    cr = wait_for(lambda: keystone_cr(env, "a"), "Keystone CR in A", 30)
    (owner,) = cr["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("ControlPlane", "cp", cp["metadata"]["uid"])
    assert owner["controller"] and owner["blockOwnerDeletion"]
    spec = cr["spec"]
    assert spec["replicas"] == 1
    assert spec["image"] == {"repository": "ghcr.io/c5c3/keystone", "tag": "28.0.0"}  # seed 003's
    assert spec["database"] == {"secretRef": {"name": DB_SECRET}, "database": "keystone"}
    assert spec["fernet"]["maxActiveKeys"] == 3 and spec["federation"] == {"enabled": False}
    # Upstream's projection: the admin password Secret by its naming rule, the ControlPlane's region and public
    # endpoint; adminUser is the CRD's default. B's ControlPlane names no public endpoint: none is projected.
    assert spec["bootstrap"] == {"adminUser": "admin", "region": "LabA", "publicEndpoint": PUBLIC_A,
                                 "adminPasswordSecretRef": {"name": SECRET, "key": "password"}}
    assert wait_for(lambda: keystone_cr(env, "b"), "Keystone CR in B", 30)["spec"]["bootstrap"] == {
        "adminUser": "admin", "region": "LabB", "adminPasswordSecretRef": {"name": SECRET, "key": "password"}}
    # Applied server-side as upstream's field manager, which owns what it projects (not adminUser: a default).
    owners = bootstrap_owners(cr)
    assert owners == {"region": {OPERATOR}, "publicEndpoint": {OPERATOR}, "adminPasswordSecretRef": {OPERATOR}}, owners
    assert any(m["manager"] == OPERATOR and m["operation"] == "Apply" for m in cr["metadata"]["managedFields"])
    assert "keystone.openstack.c5c3.io/finalizer" in wait_for(
        lambda: keystone_cr(env, "a")["metadata"].get("finalizers"), "finalizer", 10)


def test_keystone_waits_for_its_secrets_before_anything_else(env):
    """Upstream's SecretsReady, the keystone-operator's first step: the database credentials (keys username and
    password), then the admin password (key password); nothing else runs until both are there."""
    cr = wait_for(lambda: has(keystone_cr(env, "a"), "SecretsReady", "False", "WaitingForDBCredentials"),
                  "A waiting for its database credentials", 60)
    assert condition(cr, "SecretsReady")["message"] == (
        "Database credentials ExternalSecret %s/%s not found yet" % (NS["a"], DB_SECRET))
    assert has(cr, "Ready", "False", "NotAllReady")
    # No key repositories, no db_sync, no API server: no condition of a later step, no Keystone.
    assert {c["type"] for c in cr["status"]["conditions"]} == {"SecretsReady", "Ready"}
    assert "endpoint" not in cr["status"] and "%s/keystone" % NS["a"] not in keystones.read_registry()
    # A Secret without `password` does not count (the message stays: no ExternalSecret says more).
    env.ok("POST", "/api/v1/namespaces/%s/secrets" % NS["a"], secret(NS["a"], DB_SECRET, username="keystone"))
    time.sleep(2)  # the stand-in watches Secrets: it has judged this one by now
    assert has(keystone_cr(env, "a"), "SecretsReady", "False", "WaitingForDBCredentials")
    env.ok("PATCH", "/api/v1/namespaces/%s/secrets/%s" % (NS["a"], DB_SECRET),
           secret(NS["a"], DB_SECRET, password=DB_PASSWORD), "application/merge-patch+json")
    cr = wait_for(lambda: has(keystone_cr(env, "a"), "SecretsReady", "False", "WaitingForAdminCredentials"),
                  "A waiting for its admin password", 30)
    assert condition(cr, "SecretsReady")["message"] == (
        "Admin credentials ExternalSecret %s/%s not found yet" % (NS["a"], SECRET))
    assert {c["type"] for c in cr["status"]["conditions"]} == {"SecretsReady", "Ready"}
    cp = wait_for(lambda: has(env.get(C5C3 + "/namespaces/%s/controlplanes/cp" % NS["a"]), "Ready", "False"),
                  "ControlPlane A not ready", 10)
    assert has(cp, "KeystoneReady", "False", "WaitingForKeystone")

    def identity_names_the_secret():
        cond = condition(env.get(C5C3 + "/namespaces/%s/controlplanes/cp" % NS["a"]), "IdentityReady")
        return cond and "SecretsReady=False WaitingForAdminCredentials" in cond["message"] and cond

    assert wait_for(identity_names_the_secret, "IdentityReady naming the unready condition", 10)["reason"] == (
        "ServicesNotReady")
    env.ok("POST", "/api/v1/namespaces/%s/secrets" % NS["a"], secret(NS["a"], SECRET, password=PASSWORDS["a"]))
    wait_for(lambda: has(keystone_cr(env, "a"), "SecretsReady", "True", "SecretsAvailable"), "A's Secrets", 30)


def test_keystone_ready_with_endpoint_and_a_token(env):
    cr = ready_keystone(env, "b")
    for ctype, reason in (("SecretsReady", "SecretsAvailable"), ("FernetKeysReady", "FernetKeysAvailable"),
                          ("CredentialKeysReady", "CredentialKeysAvailable"),
                          ("DatabaseReady", "DatabaseSynced"), ("DeploymentReady", "DeploymentReady"),
                          ("KeystoneAPIReady", "APIHealthy"), ("BootstrapReady", "BootstrapComplete")):
        assert has(cr, ctype, "True", reason), (ctype, condition(cr, ctype))
    assert cr["status"]["observedGeneration"] == cr["metadata"]["generation"]
    endpoint = cr["status"]["endpoint"]
    port = int(endpoint.split(":")[2].split("/")[0])
    assert endpoint == "http://127.0.0.1:%d/v3" % port and port in config.KEYSTONE_CR_PORTS
    annotations = cr["metadata"].get("annotations") or {}
    assert annotations.get("forge.c5c3.io/admin-password-hash") == hashlib.sha256(PASSWORDS["b"].encode()).hexdigest()
    sess = admin_session(endpoint, PASSWORDS["b"])
    assert sess.get_token()
    # The bootstrap registered the identity endpoints in the CR's region, public = its own URL.
    assert sess.get_endpoint(service_type="identity", interface="public", region_name="LabB") == endpoint
    cp = wait_for(lambda: has(env.get(C5C3 + "/namespaces/%s/controlplanes/cp" % NS["b"]), "Ready", "True", "AllReady"),
                  "ControlPlane B Ready", 20)
    assert has(cp, "KeystoneReady", "True", "KeystoneReady") and has(cp, "IdentityReady", "True")
    # Only Keystone among the services; the infrastructure and K-ORC are always managed.
    assert cp["status"]["phase"] == "Ready" and cp["status"]["services"] == {
        k: "Ready" for k in ("mariadb", "rabbitmq", "valkey", "memcached", "keystone", "k-orc")}
    assert cp["status"]["endpoints"] == {"keystone": endpoint}
    listed = {(k["namespace"], k["name"]): k for k in standins.keystone_instances()}
    assert listed[(NS["b"], "keystone")]["url"] == endpoint and listed[(NS["b"], "keystone")]["ready"]


def test_a_database_secret_without_its_password_key_stops_the_keystone_being_ready(env):
    """Upstream re-checks the Secrets on every pass: a key gone makes SecretsReady False with its reason and Ready
    False; the Keystone that runs keeps running (its pods would) and is Ready again once the key is back."""
    endpoint = ready_keystone(env, "b")["status"]["endpoint"]
    url = "/api/v1/namespaces/%s/secrets/%s" % (NS["b"], DB_SECRET)
    env.ok("PATCH", url, [{"op": "remove", "path": "/data/password"}], "application/json-patch+json")
    cr = wait_for(lambda: has(keystone_cr(env, "b"), "SecretsReady", "False", "WaitingForDBCredentials"),
                  "B's SecretsReady False without the database password", 30)
    assert condition(cr, "SecretsReady")["message"] == (
        "Database credentials ExternalSecret %s/%s not found yet" % (NS["b"], DB_SECRET))
    assert has(cr, "Ready", "False", "NotAllReady")
    assert has(cr, "BootstrapReady", "True", "BootstrapComplete") and cr["status"]["endpoint"] == endpoint
    assert admin_session(endpoint, PASSWORDS["b"]).get_token()
    cp = wait_for(lambda: has(env.get(C5C3 + "/namespaces/%s/controlplanes/cp" % NS["b"]), "KeystoneReady", "False",
                              "WaitingForKeystone"), "ControlPlane B waiting for its Keystone", 20)
    assert has(cp, "Ready", "False")
    env.ok("PATCH", url, [{"op": "add", "path": "/data/password",
                           "value": base64.b64encode(DB_PASSWORD.encode()).decode()}], "application/json-patch+json")
    wait_for(lambda: has(keystone_cr(env, "b"), "Ready", "True", "AllReady"), "Keystone B Ready again", 30)
    wait_for(lambda: has(env.get(C5C3 + "/namespaces/%s/controlplanes/cp" % NS["b"]), "Ready", "True"),
             "ControlPlane B Ready again", 20)


def test_controlplane_change_reaches_the_keystone_and_keeps_bootstrap(env):
    env.ok("PATCH", C5C3 + "/namespaces/%s/controlplanes/cp" % NS["b"],
           {"spec": {"services": {"keystone": {"replicas": 2}}}}, "application/merge-patch+json")

    def replicas_2():
        cr = keystone_cr(env, "b")
        return cr if cr["spec"]["replicas"] == 2 else None

    cr = wait_for(replicas_2, "replicas 2 on Keystone B", 20)
    assert cr["spec"]["bootstrap"]["region"] == "LabB" and cr["metadata"]["generation"] >= 2
    wait_for(lambda: has(keystone_cr(env, "b"), "Ready", "True"), "Keystone B Ready for its new generation", 30)
    wait_for(lambda: has(env.get(C5C3 + "/namespaces/%s/controlplanes/cp" % NS["b"]), "Ready", "True"),
             "ControlPlane B Ready for its new generation", 20)


def test_the_c5c3_operator_takes_back_a_bootstrap_field_another_manager_wrote(env):
    """Upstream re-applies its projection with force on every reconcile: a value another field manager forces into a
    field it owns (as the collection did when it applied the bootstrap itself) lasts until the operator's next
    pass, and the field is the operator's again; without force, another value is a conflict."""
    ready_keystone(env, "a")  # bootstrapped: a public endpoint changed now is not what its bootstrap registers
    url = KEYSTONE + "/namespaces/%s/keystones/keystone" % NS["a"]
    other = {"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "Keystone",
             "metadata": {"name": "keystone", "namespace": NS["a"]},
             "spec": {"bootstrap": {"publicEndpoint": "https://keystone.elsewhere.example/v3"}}}
    generation = keystone_cr(env, "a")["metadata"]["generation"]
    env.ok("PATCH", url, other, "application/apply-patch+yaml", {"fieldManager": COLLECTION, "force": "true"})

    def taken_back():
        cr = keystone_cr(env, "a")
        return (cr["metadata"]["generation"] >= generation + 2 and cr["spec"]["bootstrap"].get("publicEndpoint") == PUBLIC_A
                and bootstrap_owners(cr).get("publicEndpoint") == {OPERATOR} and cr)

    cr = wait_for(taken_back, "the c5c3-operator's public endpoint back on Keystone A", 20)
    assert cr["spec"]["bootstrap"]["region"] == "LabA"
    code, out = env.call("PATCH", url, other, "application/apply-patch+yaml", {"fieldManager": COLLECTION})
    assert code == 409 and OPERATOR in str(out), (code, out)
    assert keystone_cr(env, "a")["spec"]["bootstrap"]["publicEndpoint"] == PUBLIC_A


def memcached_stats(port):
    """memcached's `stats` as {name: value}."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(b"stats\r\n")
        data = b""
        while not data.endswith(b"END\r\n"):
            chunk = conn.recv(65536)
            assert chunk, "memcached closed the connection"
            data += chunk
    return dict(line.split()[1:3] for line in data.decode().splitlines() if line.startswith("STAT "))


def test_password_change_runs_the_bootstrap_again(env):
    """...and, as upstream, revokes the tokens of the old password: keystone-manage and the API share the cache."""
    endpoint = ready_keystone(env, "b")["status"]["endpoint"]
    old = admin_session(endpoint, PASSWORDS["b"])
    old_token = old.get_token()
    assert old.get(endpoint + "/auth/tokens", headers={"X-Subject-Token": old_token}).status_code == 200
    env.ok("PATCH", "/api/v1/namespaces/%s/secrets/%s" % (NS["b"], SECRET),
           {"data": {"password": base64.b64encode(PASSWORDS["b2"].encode()).decode()}}, "application/merge-patch+json")
    digest = hashlib.sha256(PASSWORDS["b2"].encode()).hexdigest()

    def bootstrapped_again():
        cr = keystone_cr(env, "b")
        return (has(cr, "BootstrapReady", "True", "BootstrapComplete")
                and (cr["metadata"].get("annotations") or {}).get("forge.c5c3.io/admin-password-hash") == digest
                and cr)

    cr = wait_for(bootstrapped_again, "Keystone B bootstrapped with the new password", SETUP)
    assert cr["status"]["endpoint"] == endpoint
    assert admin_session(endpoint, PASSWORDS["b2"]).get_token()
    with pytest.raises(ks_exceptions.Unauthorized):
        admin_session(endpoint, PASSWORDS["b"]).get_token()
    # bootstrap's password reset persisted a revocation event; the API, which validated the old token
    # from its cache a moment ago, sees it (a cache of the API process alone would still say 200).
    # Keystone revokes by the second: a token issued in the second of the reset's revocation event is revoked too
    # (a 401 for the caller below), so the caller's token comes from a later second.
    time.sleep(1.1)
    new = admin_session(endpoint, PASSWORDS["b2"])
    resp = new.get(endpoint + "/auth/tokens", headers={"X-Subject-Token": old_token}, raise_exc=False)
    assert resp.status_code == 404, resp.text
    inst = keystones.Instance(NS["b"], "keystone", int(endpoint.split(":")[2].split("/")[0]))
    assert "memcache_servers = 127.0.0.1:%d" % inst.cache_port in inst.conf.read_text()
    stats = memcached_stats(inst.cache_port)
    assert int(stats["get_hits"]) > 0 and int(stats["curr_items"]) > 0, stats
    wait_for(lambda: has(keystone_cr(env, "b"), "Ready", "True", "AllReady"), "Keystone B Ready again", 30)


def test_two_controlplanes_have_two_separate_keystones(env):
    a, b = ready_keystone(env, "a"), ready_keystone(env, "b")
    url_a, url_b = a["status"]["endpoint"], b["status"]["endpoint"]
    assert url_a != url_b
    sess_a = admin_session(url_a, PASSWORDS["a"])
    sess_b = admin_session(url_b, PASSWORDS["b2"])  # B's password since the test before
    name = "only-in-a-%s" % TOKEN
    sess_a.post(url_a + "/projects", json={"project": {"name": name, "domain_id": "default"}})
    assert [p["name"] for p in sess_a.get(url_a + "/projects", params={"name": name}).json()["projects"]] == [name]
    assert sess_b.get(url_b + "/projects", params={"name": name}).json()["projects"] == []
    for url, password in ((url_b, PASSWORDS["a"]), (url_a, PASSWORDS["b2"])):  # each has its own admin
        with pytest.raises(ks_exceptions.Unauthorized):
            admin_session(url, password).get_token()
    # A's bootstrap registered the public endpoint its ControlPlane names (projected), B's its own URL.
    assert sess_a.get_endpoint(service_type="identity", interface="public", region_name="LabA") == PUBLIC_A
    assert sess_b.get_endpoint(service_type="identity", interface="public", region_name="LabB") == url_b


@pytest.fixture(scope="module")
def endgame(env):
    """At the same moment: B's namespace is deleted, and A's Keystone dies and cannot start again -- so that
    the namespace controller's grace period (5 s) and A's stop and restart back-off overlap.
    Returns {key: (endpoint port, Keystone home)} from before."""
    before = {}
    for key in NS:
        cr = ready_keystone(env, key)
        home = config.KEYSTONES / NS[key] / "keystone"
        assert home.exists() and keystones.process_name(NS[key], "keystone") in processes.running()
        before[key] = (int(cr["status"]["endpoint"].split(":")[2].split("/")[0]), home)
    env.ok("DELETE", "/api/v1/namespaces/" + NS["b"])  # the namespace controller deletes the CRs in it
    update_settings(keystones={"%s/keystone" % NS["a"]: {"fail_start": True}})
    processes.stop(keystones.process_name(NS["a"], "keystone"))  # as if its pod died
    update_settings()  # written again: a changed standins.yaml wakes the stand-in, so it sees the exit at once
    return before


def test_a_keystone_that_cannot_start_says_so(env, endgame):
    endpoint = keystones.url_of(endgame["a"][0])

    def cannot_start():  # exited again after the restart, not only because we stopped it
        obj = keystone_cr(env, "a")
        found = re.search(r"the API server exited (\d+) time", (condition(obj, "DeploymentReady") or {}).get("message", ""))
        return found and int(found.group(1)) >= 2 and has(obj, "DeploymentReady", "False", "WaitingForDeployment")

    cr = wait_for(cannot_start, "Keystone A reporting that it cannot start", 60)
    message = condition(cr, "DeploymentReady")["message"]
    assert message.startswith("Keystone API deployment is not yet available; the API server exited"), message
    assert str(processes.LOGS / (keystones.process_name(NS["a"], "keystone") + ".log")) in message
    assert has(cr, "Ready", "False", "NotAllReady")
    assert has(cr, "KeystoneAPIReady", "False") and cr["status"]["endpoint"] == endpoint
    cp = wait_for(lambda: has(env.get(C5C3 + "/namespaces/%s/controlplanes/cp" % NS["a"]), "Ready", "False"),
                  "ControlPlane A not ready", 20)
    assert cp["status"]["phase"] == "Degraded", cp["status"]


def test_deleting_the_keystone_or_its_namespace_stops_it(env, endgame):
    """A: its ControlPlane, then its Keystone CR; B: its namespace (deleted by the endgame fixture)."""
    # The ControlPlane first (otherwise the c5c3-operator would project the Keystone CR again).
    env.ok("DELETE", C5C3 + "/namespaces/%s/controlplanes/cp" % NS["a"])
    env.call("DELETE", KEYSTONE + "/namespaces/%s/keystones/keystone" % NS["a"])
    wait_for(lambda: all(keystone_cr(env, key) is None for key in NS),
             "Keystone CRs gone (finalizer removed) after the deletions", 120)
    registry = keystones.read_registry()
    for key, (port, home) in endgame.items():
        assert not processes.port_open(port), key
        assert keystones.process_name(NS[key], "keystone") not in processes.running(), key
        assert not home.exists(), key
        assert "%s/keystone" % NS[key] not in registry, key
