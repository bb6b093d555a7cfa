"""Phases 4-5 against the lab's real Keystones and real K-ORC: playbooks/control_plane.yml, keystone.yml.

The region's OpenStack cluster lives in namespace `openstack` of lab-control-plane: its ControlPlane
makes the c5c3-operator stand-in create the Keystone CR, the keystone-operator stand-in runs a real
Keystone for it, and the role bootstraps it and registers the catalog through K-ORC. The session's
`region` fixture builds it with site.yml from an empty region in a -vvv run (its output is grepped
for every secret) and runs site.yml again; the tests read K-ORC, Keystone and the credentials it
left, judge those runs, and run check mode and the failure cases. Tests that change something work
in namespaces of their own (a tenant's separate Keystone among them) and remove them, or, like the
broken credential, leave the region as site.yml would.
"""

import base64
import json
import time

import openstack
import pytest
import yaml

from conftest import (KORC_KINDS, KORC_RESOURCES, REGION_HOST as HOST, REGION_NAMESPACE as NAMESPACE, REPO, failures,
                      delete_namespace as _delete_namespace, keystone_admin as _admin, keystone_endpoint as _endpoint, kubectl,
                      read_json, remove_openstack_cluster as _remove_cluster, run_playbook, run_tasks, run_verbose,
                      secret_data as _secret, standins_restored, token_status, update_standins, VVV_LINE,
                      wait_truthy)
from regionlab import config
from regionlab import keystone as lab_keystone

PLAYBOOK = REPO / "playbooks" / "keystone.yml"
PHASE4 = REPO / "playbooks" / "control_plane.yml"
# The c5c3-operator's server-side apply field manager (upstream's), which owns the Keystone CR's bootstrap.
OPERATOR = "cobaltcore-operator"
COLLECTION = "c5c3.cobaltcore"
# Not a lab claim: phase 7 owns lab-tenant-a and lab-tenant-b (test_tenants.py).
TENANT = "kc-tenant"
TENANT_NAMESPACE = "openstack-" + TENANT
BAD_IMPORT_NAMESPACE = "openstack-badimport"
SERVICES = ["glance", "placement", "nova", "neutron", "cinder"]
IMPORT_NOT_FOUND = "Waiting for OpenStack resource to be created externally"


def _lab_admin():
    """The lab's own Keystone (not run by a Keystone CR), for the keystone_bootstrap_keystone_cr=false cases."""
    settings = yaml.safe_load(lab_keystone.CLOUDS.read_text())["clouds"][lab_keystone.CLOUD_NAME]
    conn = openstack.connect(load_yaml_config=False, **settings)
    conn.authorize()
    return conn


def _vars(kubeconfig, **extra):
    values = {"keystone_bootstrap_kubeconfig": str(kubeconfig)}
    values.update(extra)
    return ["-e", json.dumps(values)]


def _failed_task(out):
    for play in out["plays"]:
        for task in play["tasks"]:
            result = task["hosts"].get(HOST, {})
            if result.get("failed"):
                return task["task"]["name"].split(" : ", 1)[-1], result
    raise AssertionError("no task failed")


def _korc_objects(kubeconfig, namespace=NAMESPACE):
    return json.loads(kubectl(kubeconfig, "-n", namespace, "get", KORC_RESOURCES, "-o", "json").stdout)["items"]


def _force_cleanup(kubeconfig, namespace, admin):
    """When K-ORC cannot finish (a test broke its credentials): drop its finalizers, clean Keystone here."""
    kinds = KORC_RESOURCES + ",secrets"
    names = kubectl(kubeconfig, "-n", namespace, "get", kinds, "-o", "name", check=False).stdout.split()
    for name in names:
        kubectl(kubeconfig, "-n", namespace, "patch", name, "--type", "merge", "-p",
                '{"metadata":{"finalizers":null}}', check=False)
    for user in admin.identity.users(domain_id="default"):
        if user.name in SERVICES:
            admin.identity.delete_user(user)
    for service in admin.identity.services():
        if service.name in SERVICES:
            admin.identity.delete_service(service)
    return _delete_namespace(kubeconfig, namespace, timeout=60)


def _delete_korc_credentials(admin, prefix="k-orc-openstack"):
    for credential in admin.identity.application_credentials(user=admin.current_user_id):
        if credential.name.startswith(prefix):
            admin.identity.delete_application_credential(admin.current_user_id, credential.id,
                                                         ignore_missing=True)


def _app_credential_connection(clouds_yaml, cloud):
    settings = yaml.safe_load(clouds_yaml)["clouds"][cloud]
    return openstack.connect(load_yaml_config=False, **settings)


@pytest.fixture(scope="module")
def cp_kubeconfig(kubeconfigs, region):  # the operators' CRDs come from phase 3
    return kubeconfigs[HOST]


@pytest.fixture(scope="module")
def first_run(region):
    """The region's OpenStack cluster from scratch: the session's -vvv site.yml run on an empty region."""
    print("first run of playbooks/site.yml (-vvv, Keystone bootstrap included): %.1fs" % region.first.seconds)
    return {"rc": region.first.rc, "out": region.first.out, "text": region.first.text,
            "elapsed": region.first.seconds}


@pytest.fixture(scope="module")
def admin(first_run, cp_kubeconfig):
    assert first_run["rc"] == 0
    return _admin(cp_kubeconfig)


def test_keystone_cr_is_bootstrapped_with_the_generated_password(first_run, cp_kubeconfig):
    if first_run["rc"] != 0:
        name, result = _failed_task(first_run["out"])
        pytest.fail("%s: %s" % (name, result.get("msg")))
    cr = json.loads(kubectl(cp_kubeconfig, "-n", NAMESPACE, "get", "keystone", "keystone", "-o", "json").stdout)
    # The public endpoint is the region's plan (cobaltcore_network.endpoints), not the Keystone's own URL: the
    # ControlPlane names it (phase 4) and the c5c3-operator projects it, with the region, into the bootstrap.
    assert cr["spec"]["bootstrap"] == {"adminUser": "admin", "region": lab_keystone.REGION,
                                       "adminPasswordSecretRef": {"name": "keystone-admin-credentials", "key": "password"},
                                       "publicEndpoint": public_identity_url(lab_keystone.REGION)}
    control_plane = read_json(cp_kubeconfig, "-n", NAMESPACE, "controlplane", lab_keystone.REGION)
    assert control_plane["spec"]["services"]["keystone"]["publicEndpoint"] == public_identity_url(lab_keystone.REGION)
    assert control_plane["spec"]["global"]["region"] == lab_keystone.REGION
    conditions = dict((c["type"], c) for c in cr["status"]["conditions"])
    for ctype in ("SecretsReady", "BootstrapReady", "Ready"):
        assert conditions[ctype]["status"] == "True"
        assert conditions[ctype]["observedGeneration"] == cr["metadata"]["generation"]
    assert len(_secret(cp_kubeconfig, "keystone-admin-credentials")["password"]) == 32
    # The database credentials the CR names, which the keystone-operator waits for (upstream's keys).
    assert cr["spec"]["database"]["secretRef"]["name"] == "keystone-db-credentials"
    database = _secret(cp_kubeconfig, "keystone-db-credentials")
    assert set(database) == {"username", "password"} and database["username"] == "keystone"
    assert len(database["password"]) == 32
    # The region's Keystone is the CR's own, not the lab's standing one.
    assert cr["status"]["endpoint"] != lab_keystone.URL
    assert ("ok", "Check in each Keystone what the bootstrap created (domain, projects, roles, the admin's role)") in [
        ("ok" if not t["hosts"][HOST].get("failed") else "failed", t["task"]["name"].split(" : ", 1)[-1])
        for p in first_run["out"]["plays"] for t in p["tasks"] if HOST in t["hosts"]]


def test_first_run_makes_every_korc_object_available(first_run, cp_kubeconfig):
    if first_run["rc"] != 0:
        name, result = _failed_task(first_run["out"])
        pytest.fail("%s: %s" % (name, result.get("msg")))
    objects = _korc_objects(cp_kubeconfig)
    counts = {}
    for obj in objects:
        counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
        conditions = dict((c["type"], c) for c in obj["status"]["conditions"])
        assert conditions["Available"]["status"] == "True", (obj["kind"], obj["metadata"]["name"], conditions)
        assert obj["status"].get("id"), (obj["kind"], obj["metadata"]["name"])
    assert counts == KORC_KINDS
    imported = sorted("%s/%s" % (o["kind"], o["metadata"]["name"]) for o in objects
                      if o["spec"]["managementPolicy"] == "unmanaged")
    assert imported == ["Domain/default", "Project/admin", "Role/admin", "Role/member", "Role/reader",
                        "Role/service", "Service/keystone"]


def test_catalog_is_in_keystone_with_public_and_internal_endpoints(first_run, admin, cp_kubeconfig):
    assert first_run["rc"] == 0
    fresh = _admin(cp_kubeconfig)  # a token issued after the run, with the catalog as it is now
    catalog = fresh.session.auth.get_access(fresh.session).service_catalog
    endpoint = _endpoint(cp_kubeconfig)
    expected = {"identity": ("keystone", endpoint), "image": ("glance", None), "placement": ("placement", None),
                "compute": ("nova", "/v2.1"), "network": ("neutron", None), "volumev3": ("cinder", "/v3/%(project_id)s")}
    for service_type, (name, suffix) in expected.items():
        for interface in ("public", "internal"):
            urls = catalog.get_urls(service_type=service_type, interface=interface, region_name=lab_keystone.REGION)
            assert len(urls) == 1, (service_type, interface, urls)
            if service_type == "identity":  # bootstrap's endpoints, adopted by K-ORC
                assert urls[0] == (public_identity_url(lab_keystone.REGION) if interface == "public" else endpoint)
            elif interface == "public":  # the region's plan: a name users reach (cobaltcore_network.endpoints)
                assert urls[0].startswith("https://%s." % name) and ".lab.cobaltcore.test/" in urls[0] + "/", urls
            else:
                assert urls[0].startswith("https://%s.openstack.svc.cluster.local:" % name), urls
                if suffix:
                    assert urls[0].endswith(suffix.replace("%(project_id)s", admin.current_project_id)), urls
    users = dict((u.name, u) for u in admin.identity.users(domain_id="default"))
    project = admin.identity.find_project("service", domain_id="default")
    roles = dict((r.id, r.name) for r in admin.identity.roles())
    for name in SERVICES:
        held = set(roles[a.role["id"]] for a in admin.identity.role_assignments(user_id=users[name].id,
                                                                                scope_project_id=project.id))
        assert {"admin", "service"} <= held, (name, held)


def test_each_application_credential_secret_issues_a_token(first_run, cp_kubeconfig, admin):
    assert first_run["rc"] == 0
    project = admin.identity.find_project("service", domain_id="default")
    for name in SERVICES:
        secret = _secret(cp_kubeconfig, "%s-keystone-credentials" % name)
        assert set(secret) >= {"value", "application_credential_id", "auth_url", "region_name", "clouds.yaml"}
        conn = _app_credential_connection(secret["clouds.yaml"], name)
        access = conn.session.auth.get_access(conn.session)
        assert access.project_id == project.id, name
        assert {"admin", "service"} <= set(access.role_names), name
    korc = _secret(cp_kubeconfig, "k-orc-clouds-yaml")
    cloud = yaml.safe_load(korc["clouds.yaml"])["clouds"]["openstack"]
    assert cloud["auth_type"] == "v3applicationcredential" and cloud["region_name"] == lab_keystone.REGION
    conn = _app_credential_connection(korc["clouds.yaml"], "openstack")
    assert conn.session.auth.get_access(conn.session).project_id == admin.current_project_id
    credential = admin.identity.get_application_credential(admin.current_user_id,
                                                           cloud["auth"]["application_credential_id"])
    assert credential.unrestricted is False and credential.name.startswith("k-orc-openstack-")


def test_verbose_output_contains_no_secret(first_run, region):
    assert first_run["rc"] == 0
    text = first_run["text"]
    left = region.first.seen["secrets"]  # as the run left them (a later test replaces K-ORC's credential)
    secrets = {"admin password": left["keystone-admin-credentials"]["password"],
               "database password": left["keystone-db-credentials"]["password"]}
    korc = left["k-orc-clouds-yaml"]
    secrets["K-ORC clouds.yaml"] = korc["clouds.yaml"]
    secrets["K-ORC credential secret"] = yaml.safe_load(korc["clouds.yaml"])["clouds"]["openstack"]["auth"][
        "application_credential_secret"]
    for name in SERVICES:
        user = left["%s-keystone-user" % name]
        credentials = left["%s-keystone-credentials" % name]
        secrets["%s password" % name] = user["password"]
        secrets["%s clouds.yaml (user)" % name] = user["clouds.yaml"]
        secrets["%s credential secret" % name] = credentials["value"]
        secrets["%s clouds.yaml (credential)" % name] = credentials["clouds.yaml"]
    assert VVV_LINE in text  # it is a -vvv run
    for what, value in secrets.items():
        assert len(value) >= 16, what
        for form in (value, base64.b64encode(value.encode()).decode()):
            assert form not in text, "%s appears in the -vvv output" % what
        if "\n" in value.strip():
            for line in value.splitlines():
                if "password" in line or "secret" in line:
                    assert line.strip() not in text, "a line of %s appears in the -vvv output" % what


def test_an_admin_given_as_auth_and_a_kubeconfig_given_as_a_mapping_never_appear_at_vvv(first_run, cp_kubeconfig):
    """Phase 5's other secret inputs from an inventory: the admin as keystone_bootstrap_auth (instead of the
    bootstrap admin's Secret) and the control-plane cluster's kubeconfig as a mapping (its client key, not a path)."""
    assert first_run["rc"] == 0
    password = _secret(cp_kubeconfig, "keystone-admin-credentials")["password"]
    auth = {"auth_url": _endpoint(cp_kubeconfig), "username": "admin", "password": password, "project_name": "admin",
            "user_domain_name": "Default", "project_domain_name": "Default"}
    with open(cp_kubeconfig) as handle:
        kubeconfig = yaml.safe_load(handle)
    credentials = [user["user"][key] for user in kubeconfig["users"] for key in ("client-key-data", "token")
                   if user["user"].get(key)]
    assert credentials, "the lab's kubeconfig holds no credential to look for"
    # The admin reaches Keystone at its internal URL (status.endpoint): the identity calls go to that interface.
    rc, out, text = run_verbose(PLAYBOOK, "--check", "-e", json.dumps(
        {"keystone_bootstrap_auth": auth, "keystone_bootstrap_kubeconfig": kubeconfig,
         "keystone_bootstrap_admin_interface": "internal"}))
    assert rc == 0, failures(out)
    assert out["stats"][HOST]["changed"] == 0
    # It is a -vvv run (Ansible names its inventory's source only then; the modules run in process: no connection).
    assert "inventory source with" in text
    key_lines = [line for value in credentials for line in base64.b64decode(value).decode(errors="replace").splitlines()
                 if len(line) >= 16]
    for value in [password, base64.b64encode(password.encode()).decode()] + credentials + key_lines:
        assert value not in text, "a secret input of phase 5 appears in the -vvv output"


def test_second_run_changes_nothing_and_keystone_ids_stay(first_run, region, cp_kubeconfig):
    """The session's second site.yml run (phases 4 and 5 included) on the region the first one built."""
    assert first_run["rc"] == 0
    second = region.second
    print("second run of playbooks/site.yml: %.1fs" % second.seconds)
    assert second.rc == 0, second.failures()
    assert second.out["stats"][HOST]["changed"] == 0, [
        t["task"]["name"] for p in second.out["plays"] for t in p["tasks"] if t["hosts"].get(HOST, {}).get("changed")]
    before, after = second.seen["before"], second.seen["after"]
    assert len(before["korc_ids"]) == sum(KORC_KINDS.values()) and all(before["korc_ids"].values())
    assert after["korc_ids"] == before["korc_ids"]
    assert before["korc_secret"] and after["korc_secret"] == before["korc_secret"]
    # Generated once: the re-run rotated neither the admin password nor the database credentials.
    built = region.first.seen["secrets"]
    for name in ("keystone-admin-credentials", "keystone-db-credentials"):
        assert _secret(cp_kubeconfig, name) == built[name], name


def test_check_mode_reports_no_change(first_run, cp_kubeconfig):
    assert first_run["rc"] == 0
    rc, out = run_playbook(PLAYBOOK, "--check", *_vars(cp_kubeconfig))
    assert rc == 0
    assert out["stats"][HOST]["changed"] == 0


def test_broken_korc_credential_is_replaced_and_the_old_one_deleted(first_run, cp_kubeconfig, admin, tmp_path):
    assert first_run["rc"] == 0
    old = yaml.safe_load(_secret(cp_kubeconfig, "k-orc-clouds-yaml")["clouds.yaml"])["clouds"]["openstack"]
    # Break it: the secret in the Secret no longer matches the credential in Keystone.
    broken = dict(old, auth=dict(old["auth"], application_credential_secret="not-the-secret-0123456789"))
    text = yaml.safe_dump({"clouds": {"openstack": broken}})
    kubectl(cp_kubeconfig, "-n", NAMESPACE, "patch", "secret", "k-orc-clouds-yaml", "--type", "merge", "-p",
            json.dumps({"data": {"clouds.yaml": base64.b64encode(text.encode()).decode()}}))
    task = {"name": "korc", "c5c3.cobaltcore.korc_credentials": {
        "secret_auth": {"auth_url": _endpoint(cp_kubeconfig), "secret_namespace": NAMESPACE,
                        "secret_name": "keystone-admin-credentials", "interface": "internal"},
        "kubeconfig": str(cp_kubeconfig), "namespace": NAMESPACE,
        "region": lab_keystone.REGION, "labels": {"c5c3.io/openstack-cluster-name": lab_keystone.REGION}}}
    rc, results = run_tasks([task], tmp_path, hosts=HOST)
    result = results["korc"][HOST]
    assert rc == 0, result.get("msg")
    assert result["minted"] is True and "no longer issues a token" in result["reason"]
    assert result["deleted_application_credentials"] == [old["auth"]["application_credential_id"]]
    assert admin.identity.find_application_credential(admin.current_user_id, old["auth"]["application_credential_id"],
                                                      ignore_missing=True) is None
    new = _secret(cp_kubeconfig, "k-orc-clouds-yaml")["clouds.yaml"]
    conn = _app_credential_connection(new, "openstack")
    assert conn.session.auth.get_access(conn.session).project_id == admin.current_project_id
    # A working credential is kept.
    rc, results = run_tasks([task], tmp_path, hosts=HOST)
    assert rc == 0 and results["korc"][HOST]["changed"] is False and results["korc"][HOST]["minted"] is False


def _bootstrap_owners(cr):
    """{field of spec.bootstrap: the field managers that own it}."""
    owners = {}
    for entry in cr["metadata"].get("managedFields") or []:
        for field in ((entry.get("fieldsV1") or {}).get("f:spec") or {}).get("f:bootstrap") or {}:
            if field.startswith("f:"):
                owners.setdefault(field[2:], set()).add(entry["manager"])
    return owners


def _keystone_cr(kubeconfig):
    """The region's Keystone CR with its managedFields (kubectl hides them unless asked)."""
    return json.loads(kubectl(kubeconfig, "-n", NAMESPACE, "get", "keystone", "keystone", "-o", "json",
                              "--show-managed-fields").stdout)


# What phase 5 writes when a cluster's Keystone CR changed since its last verification (its record's digest covers
# the CR's generation): the record alone, never the CR.
RECORD_TASK = "Record the state of each cluster verified now (recheck=changed compares the next run with it)"


def _phases_4_and_5(allowed=()):
    """playbooks/control_plane.yml and keystone.yml on the converged region; the tasks that changed something, which
    must be among allowed (None: any)."""
    changed = []
    for playbook in (PHASE4, PLAYBOOK):
        rc, out = run_playbook(playbook, COBALTCORE_LAB_DIR=str(config.STATE))
        assert rc == 0, failures(out)
        changed += [t["task"]["name"].split(" : ", 1)[-1] for p in out["plays"] for t in p["tasks"]
                    if t["hosts"].get(HOST, {}).get("changed")]
    assert allowed is None or set(changed) <= set(allowed), changed
    return changed


def test_the_c5c3_operator_owns_the_bootstrap_and_phases_4_and_5_again_change_nothing(first_run, cp_kubeconfig):
    """One owner for the Keystone CR's bootstrap: the c5c3-operator projects it from the ControlPlane (field manager
    cobaltcore-operator, forced, re-asserted on every reconcile); the collection writes the ControlPlane and never
    the Keystone CR. So phases 4 and 5 run again with changed=0 and no value moves, and a value another writer forces
    into the CR is taken back by the operator, not fought over by the collection."""
    assert first_run["rc"] == 0
    _phases_4_and_5(allowed=None)  # the region as phases 4 and 5 leave it, whatever the tests before changed
    before = _keystone_cr(cp_kubeconfig)
    owners = _bootstrap_owners(before)
    assert owners["region"] == owners["adminPasswordSecretRef"] == owners["publicEndpoint"] == {OPERATOR}, owners
    assert not any(COLLECTION in managers for managers in owners.values()), owners
    assert _phases_4_and_5() == []
    after = _keystone_cr(cp_kubeconfig)
    assert after["metadata"]["generation"] == before["metadata"]["generation"]  # nobody wrote the spec
    assert after["spec"]["bootstrap"] == before["spec"]["bootstrap"] and _bootstrap_owners(after) == owners
    # Another writer forces a value into a field the operator owns (as the collection did when it applied the
    # bootstrap itself): the operator takes it back at its next pass ...
    other = {"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "Keystone",
             "metadata": {"name": "keystone", "namespace": NAMESPACE},
             "spec": {"bootstrap": {"publicEndpoint": "https://keystone.elsewhere.example/v3"}}}
    kubectl(cp_kubeconfig, "apply", "--server-side", "--force-conflicts", "--field-manager", "a-test-writer", "-f", "-",
            stdin=json.dumps(other))

    def taken_back():
        cr = _keystone_cr(cp_kubeconfig)
        return (cr["metadata"]["generation"] >= before["metadata"]["generation"] + 2
                and cr["spec"]["bootstrap"] == before["spec"]["bootstrap"] and _bootstrap_owners(cr) == owners and cr)

    moved = wait_truthy(taken_back, "the c5c3-operator taking its public endpoint back", 30)
    # ... and phases 4 and 5 write neither the CR nor the ControlPlane (the record of the verified state follows the
    # CR's new generation); no value moves.
    _phases_4_and_5(allowed=[RECORD_TASK])
    final = _keystone_cr(cp_kubeconfig)
    assert final["metadata"]["generation"] == moved["metadata"]["generation"]
    assert final["spec"]["bootstrap"] == before["spec"]["bootstrap"] and _bootstrap_owners(final) == owners


def _standing_keystone(**extra):
    """The lab's own Keystone, run by no Keystone CR: the role's keystone_bootstrap_keystone_cr=false mode."""
    values = dict(keystone_bootstrap_keystone_cr=False, keystone_bootstrap_clouds_yaml=str(lab_keystone.CLOUDS),
                  keystone_bootstrap_cloud=lab_keystone.CLOUD_NAME)
    values.update(extra)
    return values


def test_import_filter_that_matches_nothing_is_reported_with_its_filter(first_run, cp_kubeconfig):
    roles = ["admin", "member", "reader", "service", "no-such-role"]
    admin = _lab_admin()
    try:
        started = time.time()
        rc, out = run_playbook(PLAYBOOK, *_vars(cp_kubeconfig, **_standing_keystone(
            keystone_bootstrap_namespace=BAD_IMPORT_NAMESPACE, keystone_bootstrap_roles=roles)))
        assert rc != 0
        name, result = _failed_task(out)
        assert name == "Report the imports K-ORC could not make, with their filters"
        message = result["msg"]
        assert 'Role %s/no-such-role: import filter {"name": "no-such-role"} matches nothing' % BAD_IMPORT_NAMESPACE \
            in message, message
        assert IMPORT_NOT_FOUND in message
        # Reported at K-ORC's first answer, not at the import timeout (120 s).
        assert time.time() - started < 110
    finally:
        if not _delete_namespace(cp_kubeconfig, BAD_IMPORT_NAMESPACE):
            _force_cleanup(cp_kubeconfig, BAD_IMPORT_NAMESPACE, admin)
        _delete_korc_credentials(admin, "k-orc-" + BAD_IMPORT_NAMESPACE)


def _clouds_yaml(tmp_path, **auth):
    clouds = yaml.safe_load(lab_keystone.CLOUDS.read_text())
    clouds["clouds"][lab_keystone.CLOUD_NAME]["auth"].update(auth)
    path = tmp_path / "clouds.yaml"
    path.write_text(yaml.safe_dump(clouds))
    path.chmod(0o600)
    return path


def test_a_cluster_without_controlplane_fails_naming_it_and_check_mode_writes_nothing(lab, cp_kubeconfig):
    namespace = "openstack-nocontrolplane"
    try:
        rc, out = run_playbook(PLAYBOOK, "--check", *_vars(cp_kubeconfig, keystone_bootstrap_namespace=namespace))
        assert rc == 0 and out["stats"][HOST]["changed"] > 0  # it would create the namespace and the password
        assert read_json(cp_kubeconfig, "namespace", namespace) is None
        rc, out = run_playbook(PLAYBOOK, *_vars(cp_kubeconfig, keystone_bootstrap_namespace=namespace,
                                                keystone_bootstrap_keystone_timeout=3))
        assert rc != 0
        name, result = _failed_task(out)
        assert name == "Report a missing Keystone CR"
        assert ("Keystone %s/keystone does not exist after 3s: the c5c3-operator creates it from the ControlPlane"
                % namespace) in result["msg"], result["msg"]
    finally:
        _delete_namespace(cp_kubeconfig, namespace)


def test_a_failed_bootstrap_fails_the_play_at_once_with_the_operators_message(lab, cp_kubeconfig):
    namespace = "openstack-badboot"
    control_plane = {"apiVersion": "c5c3.io/v1alpha1", "kind": "ControlPlane",
                     "metadata": {"name": "badboot", "namespace": namespace},
                     "spec": {"services": {"keystone": {"enabled": True, "replicas": 1}}}}
    try:
        with standins_restored():
            # Its five attempts 0.25 s apart, doubling (the lab's default 1 s would only make the test wait 11 s longer).
            update_standins(lambda d: d.setdefault("keystones", {}).update({
                "%s/keystone" % namespace: {"fail_bootstrap": True, "bootstrap_backoff": 0.25}}))
            kubectl(cp_kubeconfig, "create", "namespace", namespace)
            kubectl(cp_kubeconfig, "apply", "-f", "-", stdin=json.dumps(control_plane))
            started = time.time()
            rc, out = run_playbook(PLAYBOOK, *_vars(cp_kubeconfig, keystone_bootstrap_namespace=namespace,
                                                    keystone_bootstrap_keystone_timeout=240))
            elapsed = time.time() - started
            assert rc != 0
            name, result = _failed_task(out)
            assert name == "Wait for the Keystone bootstraps (BootstrapReady and Ready for the current generation)"
            assert "BootstrapFailed" in result["msg"] and "job has permanently failed" in result["msg"], result["msg"]
            assert elapsed < 200, elapsed  # at the operator's verdict, not at the timeout
    finally:
        _remove_cluster(cp_kubeconfig, namespace)


def test_keystone_unreachable_is_retried_then_fails_naming_the_endpoint(first_run, cp_kubeconfig):
    assert first_run["rc"] == 0
    closed = "http://127.0.0.1:%d/v3" % (config.PORT_BASE + 99)
    rc, out = run_playbook(PLAYBOOK, *_vars(cp_kubeconfig, keystone_bootstrap_admin_url=closed,
                                            keystone_bootstrap_connect_retries=3,
                                            keystone_bootstrap_connect_retry_delay=0.2))
    assert rc != 0
    name, result = _failed_task(out)
    assert name == "Check in each Keystone what the bootstrap created (domain, projects, roles, the admin's role)"
    assert ("Keystone at %s (user admin, password from Secret openstack/keystone-admin-credentials) is not reachable"
            % closed) in result["msg"], result["msg"]
    assert "failed 3 times" in result["msg"]


def test_wrong_admin_password_fails_clearly(lab, cp_kubeconfig, tmp_path):
    rc, out = run_playbook(PLAYBOOK, *_vars(cp_kubeconfig, **_standing_keystone(
        keystone_bootstrap_clouds_yaml=str(_clouds_yaml(tmp_path, password="wrong-password-0123456789")),
        keystone_bootstrap_create_namespace=False)))
    assert rc != 0
    name, result = _failed_task(out)
    assert name == "Mint K-ORC's application credentials and write their clouds.yaml Secrets"
    assert "Keystone at %s (cloud lab-admin) refused the credentials (HTTP 401)" % lab_keystone.URL in result["msg"]
    assert "wrong-password-0123456789" not in json.dumps(out)


def test_openbao_path_deletes_a_replaced_credential_only_once_eso_delivered_the_new_one(first_run, cp_kubeconfig,
                                                                                        admin, tmp_path):
    """korc_credentials with synced_secret; the test plays ESO by copying the PushSecret's source to the target."""
    assert first_run["rc"] == 0
    namespace = "openstack-openbao"
    kubectl(cp_kubeconfig, "create", "namespace", namespace)
    task = {"name": "korc", "c5c3.cobaltcore.korc_credentials": {
        "secret_auth": {"auth_url": _endpoint(cp_kubeconfig), "secret_namespace": NAMESPACE,
                        "secret_name": "keystone-admin-credentials", "interface": "internal"},
        "kubeconfig": str(cp_kubeconfig), "namespace": namespace, "region": lab_keystone.REGION,
        "secret_name": "k-orc-app-credential", "synced_secret": "k-orc-clouds-yaml"}}

    def run():
        rc, results = run_tasks([task], tmp_path, hosts=HOST)
        assert rc == 0, results["korc"][HOST].get("msg")
        return results["korc"][HOST]

    def eso_sync():
        source = json.loads(kubectl(cp_kubeconfig, "-n", namespace, "get", "secret", "k-orc-app-credential",
                                    "-o", "json").stdout)
        target = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "k-orc-clouds-yaml", "namespace": namespace},
                  "data": source["data"]}
        kubectl(cp_kubeconfig, "apply", "-f", "-", stdin=json.dumps(target))

    def exists(credential_id):
        return admin.identity.find_application_credential(admin.current_user_id, credential_id,
                                                          ignore_missing=True) is not None
    try:
        first = run()
        assert first["minted"] is True and first["pending_sync"] is True
        assert _secret(cp_kubeconfig, "k-orc-clouds-yaml", namespace) is None
        eso_sync()
        assert run()["changed"] is False
        # Break the source: a new credential is minted, the old one stays until ESO delivered the new one.
        broken = yaml.safe_load(_secret(cp_kubeconfig, "k-orc-app-credential", namespace)["clouds.yaml"])
        broken["clouds"]["openstack"]["auth"]["application_credential_secret"] = "not-the-secret-0123456789"
        kubectl(cp_kubeconfig, "-n", namespace, "patch", "secret", "k-orc-app-credential", "--type", "merge", "-p",
                json.dumps({"data": {"clouds.yaml": base64.b64encode(yaml.safe_dump(broken).encode()).decode()}}))
        second = run()
        assert second["minted"] is True and second["pending_sync"] is True
        assert second["deleted_application_credentials"] == [] and exists(first["application_credential_id"])
        eso_sync()
        third = run()
        assert third["pending_sync"] is False and third["changed"] is True
        assert third["deleted_application_credentials"] == [first["application_credential_id"]]
        assert not exists(first["application_credential_id"]) and exists(second["application_credential_id"])
        assert run()["changed"] is False
    finally:
        _delete_namespace(cp_kubeconfig, namespace)
        _delete_korc_credentials(admin, "k-orc-" + namespace)


def _tenant_play(kubeconfig, services, tmp_path):
    """The ControlPlane composed from lab-tenant-a's claim renamed, and the role on its cluster alone."""
    lab_claim = (REPO / "inventories" / "lab" / "tenants" / "lab-tenant-a.yaml").read_text()
    claim = tmp_path / ("%s.yaml" % TENANT)
    claim.write_text(lab_claim.replace("name: lab-tenant-a", "name: %s" % TENANT))
    return [{"name": "tenant", "hosts": HOST, "gather_facts": False, "tasks": [
        {"name": "ControlPlane of the tenant", "c5c3.cobaltcore.apply": {
            "kubeconfig": str(kubeconfig),
            "definition": "{{ (lookup('ansible.builtin.file', '%s') | from_yaml"
                          " | c5c3.cobaltcore.compose_openstack_cluster(region)).control_plane }}" % claim},
         "vars": {"region": {"name": "{{ cobaltcore_region }}", "groups": "{{ groups }}",
                             "hostvars": "{{ hostvars }}"}}},
        {"name": "Keystone of the tenant", "ansible.builtin.include_role": {"name": "c5c3.cobaltcore.keystone_bootstrap"},
         "vars": {"keystone_bootstrap_kubeconfig": str(kubeconfig), "keystone_bootstrap_namespace": TENANT_NAMESPACE,
                  "keystone_bootstrap_cluster_name": TENANT, "keystone_bootstrap_services": services}}]}]


def public_identity_url(cluster):
    """The lab plan's public URL of a cluster's Keystone (inventories/lab, public_url_template)."""
    return "https://keystone.%s.lab.cobaltcore.test/v3" % cluster


def _removing_the_korc_objects_leaves_what_the_bootstrap_created(kubeconfig, namespace, admin, endpoint, public):
    """K-ORC deletes what it manages, never the bootstrap's resources or the service project."""
    kubectl(kubeconfig, "-n", namespace, "delete", KORC_RESOURCES, "--all", "--timeout=300s")
    assert [u.name for u in admin.identity.users(domain_id="default")] == ["admin"]
    assert sorted((s.name, s.type) for s in admin.identity.services()) == [("keystone", "identity")]
    identity = sorted((e.interface, e.url) for e in admin.identity.endpoints())
    assert identity == sorted([("admin", endpoint), ("internal", endpoint), ("public", public)])
    assert admin.identity.find_project("service", domain_id="default", ignore_missing=True) is not None
    assert {"admin", "member", "reader", "service"} <= set(r.name for r in admin.identity.roles())


def test_tenant_cluster_has_its_own_keystone_and_keeps_the_bootstrap_when_korc_lets_go(
        first_run, cp_kubeconfig, admin, tmp_path):
    """A tenant's OpenStack cluster: its own Keystone, catalog and credentials; then its K-ORC objects go.

    The removal runs on the tenant's cluster, not on the region's, which the other tests share.
    """
    assert first_run["rc"] == 0
    services = ["keystone", "glance", "placement"]
    play = tmp_path / "tenant.yml"
    play.write_text(json.dumps(_tenant_play(cp_kubeconfig, services, tmp_path)))
    try:
        started = time.time()
        rc, out = run_playbook(play)
        print("tenant %s: ControlPlane and keystone_bootstrap in %.1fs" % (TENANT, time.time() - started))
        if rc != 0:
            name, result = _failed_task(out)
            pytest.fail("%s: %s" % (name, result.get("msg")))
        region_url, tenant_url = _endpoint(cp_kubeconfig), _endpoint(cp_kubeconfig, TENANT_NAMESPACE)
        assert tenant_url and tenant_url != region_url
        tenant_admin = _admin(cp_kubeconfig, TENANT_NAMESPACE)
        assert (_secret(cp_kubeconfig, "keystone-admin-credentials", TENANT_NAMESPACE)["password"]
                != _secret(cp_kubeconfig, "keystone-admin-credentials")["password"])
        # Each Keystone holds its own cluster's catalog only.
        assert sorted(s.name for s in tenant_admin.identity.services()) == sorted(services)
        assert sorted(s.name for s in admin.identity.services()) == sorted(["keystone"] + SERVICES)
        tenant_glance = tenant_admin.identity.find_user("glance", domain_id="default")
        assert tenant_glance.id != admin.identity.find_user("glance", domain_id="default").id
        assert admin.identity.find_user(tenant_glance.id, ignore_missing=True) is None
        # K-ORC's credentials (and the services') work in their own Keystone only.
        for namespace, own, other in ((NAMESPACE, region_url, tenant_url), (TENANT_NAMESPACE, tenant_url, region_url)):
            for secret, cloud in (("k-orc-clouds-yaml", "openstack"), ("glance-keystone-credentials", "glance")):
                clouds_yaml = _secret(cp_kubeconfig, secret, namespace)["clouds.yaml"]
                assert token_status(own, clouds_yaml, cloud) == 201, (namespace, secret)
                assert token_status(other, clouds_yaml, cloud) in (401, 404), (namespace, secret)
        for obj in _korc_objects(cp_kubeconfig, TENANT_NAMESPACE):
            korc_secret = obj["spec"].get("cloudCredentialsRef", {}).get("secretName")
            assert korc_secret in ("k-orc-clouds-yaml", "glance-keystone-user", "placement-keystone-user"), obj
        _removing_the_korc_objects_leaves_what_the_bootstrap_created(cp_kubeconfig, TENANT_NAMESPACE, tenant_admin,
                                                                     tenant_url, public_identity_url(TENANT))
    finally:
        assert _remove_cluster(cp_kubeconfig, TENANT_NAMESPACE)
