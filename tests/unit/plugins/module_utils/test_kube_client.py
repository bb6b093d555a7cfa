# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""KubeClient against real local HTTP and HTTPS servers (http.server in a thread, a test CA):
retries and their bounds, permanent and transient errors, unreachable servers, discovery,
TLS verification, client certificates, tokens, exec plugins, impersonation and proxies."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import json
import os
import socket
import stat
import sys
import tempfile
import textwrap
import time

import pytest
from cryptography.x509.oid import ExtendedKeyUsageOID

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s import client as client_module
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeClient, KubeError

from tls_servers import API, CA, https_api

EXEC = "client.authentication.k8s.io/v1"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    ca, other = CA("test-ca"), CA("other-ca")
    directory = tmp_path_factory.mktemp("pki")
    files = {}
    items = {
        "server": ca.issue("server", dns=["localhost"], ips=["127.0.0.1"]),
        "named": ca.issue("named", dns=["kube.internal"]),
        "client": ca.issue("tester", org="testers", usage=ExtendedKeyUsageOID.CLIENT_AUTH),
        "stranger": other.issue("stranger", usage=ExtendedKeyUsageOID.CLIENT_AUTH),
    }
    for name, (cert, key) in items.items():
        (directory / (name + ".crt")).write_text(cert)
        (directory / (name + ".key")).write_text(key)
        files[name] = (str(directory / (name + ".crt")), str(directory / (name + ".key")))
    (directory / "ca.crt").write_text(ca.pem)
    return {"ca": ca.pem, "ca_file": str(directory / "ca.crt"), "other_ca": other.pem, "pem": items,
            "files": files, "dir": directory}


@pytest.fixture
def api():
    server = API()
    yield server
    server.stop()


@pytest.fixture
def tls_api(pki):
    server = https_api(pki)
    yield server
    server.stop()


def b64(text):
    return base64.b64encode(text.encode()).decode()


def kubeconfig(server, user=None, cluster=None):
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "test",
        "clusters": [{"name": "test", "cluster": dict({"server": server}, **(cluster or {}))}],
        "users": [{"name": "test", "user": user or {}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
    }


def make_client(server, user=None, cluster=None, **options):
    auth = {"kubeconfig": kubeconfig(server, user, cluster)}
    settings = dict(retries=8, backoff=0.01, request_timeout=5, retry_budget=60)
    for key in list(options):
        if key in settings:
            settings[key] = options.pop(key)
    auth.update(options)
    return KubeClient(auth, **settings)


STATUS_503 = (503, {"kind": "Status", "reason": "ServiceUnavailable", "message": "etcd is restarting"})
OK = (200, {"kind": "ConfigMap", "metadata": {"name": "a"}})
PATH = "/api/v1/namespaces/ns/configmaps/a"


# -- retries and their bounds --------------------------------------------------------------------------------------

def test_transient_errors_are_retried_until_the_answer(api):
    api.route("GET", PATH, STATUS_503, (429, {"message": "slow down"}), (502, {}), (504, {}), OK)
    client = make_client(api.url)
    assert client.request("GET", PATH) == (200, OK[1])
    assert api.count("GET", PATH) == 5
    assert client.requests == {"GET": 5}


def test_retries_stop_after_the_attempt_bound(api):
    api.route("GET", PATH, STATUS_503)
    client = make_client(api.url, retries=3)
    with pytest.raises(KubeError) as err:
        client.request("GET", PATH)
    assert err.value.status == 503
    assert str(err.value) == "GET %s failed with 503 ServiceUnavailable: etcd is restarting" % PATH
    assert api.count("GET", PATH) == 4  # the first attempt and 3 retries


def test_retries_stop_at_the_request_budget(api):
    api.route("GET", PATH, STATUS_503 + ({"Retry-After": "1"},))
    client = make_client(api.url, retry_budget=2.9)
    started = time.time()
    with pytest.raises(KubeError):
        client.request("GET", PATH)
    # Attempts at 0 s, 1 s and 2 s; a third retry would end after the 2.9 s budget, so it is not made.
    assert api.count("GET", PATH) == 3
    assert 1.9 < time.time() - started < 3.5


def test_retry_after_replaces_the_backoff_and_is_capped(api, monkeypatch):
    api.route("GET", PATH, STATUS_503 + ({"Retry-After": "0.2"},), OK)
    client = make_client(api.url, backoff=30)
    started = time.time()
    assert client.request("GET", PATH)[0] == 200
    assert 0.2 <= time.time() - started < 2
    monkeypatch.setattr(client_module, "MAX_BACKOFF", 0.3)
    api.route("GET", PATH, STATUS_503 + ({"Retry-After": "3600"},), OK)
    started = time.time()
    assert client.request("GET", PATH)[0] == 200
    assert 0.3 <= time.time() - started < 2


def test_a_conflict_outside_apply_is_retried(api):
    api.route("PUT", PATH, (409, {"reason": "Conflict", "message": "the object has been modified"}), OK)
    client = make_client(api.url)
    assert client.request("PUT", PATH, body={})[0] == 200
    assert api.count("PUT", PATH) == 2


# -- permanent errors ---------------------------------------------------------------------------------------------

APPLY = "application/apply-patch+yaml"


def test_an_apply_conflict_fails_at_once_and_says_how_to_take_over(api):
    message = 'Apply failed with 1 conflict: conflict with "kubectl": .data.k'
    api.route("PATCH", PATH, (409, {"kind": "Status", "reason": "Conflict", "message": message}))
    client = make_client(api.url)
    with pytest.raises(KubeError) as err:
        client.server_side_apply(client_module.ResourceType("v1", "ConfigMap", "configmaps", True),
                                 {"metadata": {"name": "a", "namespace": "ns"}})
    assert str(err.value) == message + "; set force_conflicts to take over these fields"
    assert api.count("PATCH", PATH) == 1
    seen = api.seen[-1]
    assert seen["headers"]["Content-Type"] == APPLY
    assert "fieldManager=c5c3.cobaltcore" in seen["path"]


def test_a_metadata_only_list_asks_for_partial_object_metadata_and_a_plain_one_for_json(api):
    secrets = "/api/v1/namespaces/ns/secrets"
    api.route("GET", secrets, (200, {"kind": "PartialObjectMetadataList", "items": [{"metadata": {"name": "s"}}]}))
    client = make_client(api.url)
    rtype = client_module.ResourceType("v1", "Secret", "secrets", True)
    assert [i["metadata"]["name"] for i in client.list(rtype, "ns", metadata_only=True)] == ["s"]
    assert api.seen[-1]["headers"]["Accept"] == client_module.PARTIAL_METADATA_LIST
    client.list(rtype, "ns")
    assert api.seen[-1]["headers"]["Accept"] == "application/json"


def test_a_field_not_declared_in_schema_fails_at_once_other_500s_are_retried(api):
    undeclared = '.spec.bogus: field not declared in schema'
    api.route("PATCH", PATH, (500, {"message": undeclared}))
    client = make_client(api.url, retries=2)
    with pytest.raises(KubeError) as err:
        client.request("PATCH", PATH, body={}, content_type=APPLY)
    assert str(err.value) == "invalid object (%s): %s" % (PATH, undeclared)
    assert api.count("PATCH", PATH) == 1
    api.route("PATCH", PATH, (500, {"message": "etcdserver: leader changed"}), OK)
    assert client.request("PATCH", PATH, body={}, content_type=APPLY)[0] == 200
    assert api.count("PATCH", PATH) == 3


def test_client_errors_are_not_retried_and_say_what_was_refused(api):
    api.route("DELETE", PATH, (403, {"reason": "Forbidden", "message": "user cannot delete"}))
    api.route("POST", "/api/v1/namespaces/ns/configmaps", (422, {"reason": "Invalid", "message": "bad", "details": {
        "causes": [{"field": "data.a", "message": "Invalid value"}, {"field": "metadata.name", "message": "too long"}]}}))
    client = make_client(api.url)
    with pytest.raises(KubeError) as err:
        client.request("DELETE", PATH)
    assert str(err.value) == "forbidden: the credentials may not delete %s (user cannot delete)" % PATH
    with pytest.raises(KubeError) as err:
        client.request("POST", "/api/v1/namespaces/ns/configmaps", body={})
    assert str(err.value) == ("invalid object (/api/v1/namespaces/ns/configmaps): data.a: Invalid value; "
                              "metadata.name: too long")
    assert err.value.as_dict()["causes"][1]["field"] == "metadata.name"
    assert api.count() == 2
    assert client.requests == {"DELETE": 1, "POST": 1}


def test_allowed_statuses_are_returned(api):
    client = make_client(api.url)
    assert client.get(client_module.ResourceType("v1", "ConfigMap", "configmaps", True), "a", "ns") is None
    assert client.request("GET", PATH, allow=(404,))[0] == 404
    assert api.count() == 2


# -- unreachable servers ---------------------------------------------------------------------------------------

def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_refused_is_retried_then_the_rest_of_the_call_fails_at_once():
    client = make_client("http://127.0.0.1:%d" % free_port(), retries=3)
    with pytest.raises(KubeError) as err:
        client.request("GET", PATH)
    assert str(err.value).startswith("cannot reach the API server at http://127.0.0.1:")
    assert "after 4 attempts" in str(err.value)
    assert client.requests == {"GET": 4}
    started = time.time()
    with pytest.raises(KubeError) as again:
        client.request("PATCH", "/api/v1/namespaces/ns/configmaps/b", body={})
    assert again.value is err.value
    assert time.time() - started < 0.5
    assert client.requests == {"GET": 4}  # not even attempted


# -- discovery ----------------------------------------------------------------------------------------------------

def test_discovery_is_lazy_cached_and_refreshed_once_for_a_missing_kind(api):
    gv = "/apis/example.com/v1"
    before = {"resources": [{"name": "widgets", "kind": "Widget", "namespaced": True},
                            {"name": "widgets/status", "kind": "Widget", "namespaced": True}]}
    after = {"resources": before["resources"] + [{"name": "gadgets", "kind": "Gadget", "namespaced": False}]}
    api.route("GET", gv, (200, before), (200, after))
    client = make_client(api.url)
    assert client.resource("example.com/v1", "Widget").name == "widgets"
    assert client.resource("example.com/v1", "Widget").path("ns", "w") == "/apis/example.com/v1/namespaces/ns/widgets/w"
    assert api.count("GET", gv) == 1
    gadget = client.resource("example.com/v1", "Gadget")  # its CRD came later: one refresh
    assert not gadget.namespaced and gadget.path("ns", "g") == "/apis/example.com/v1/gadgets/g"
    assert api.count("GET", gv) == 2
    with pytest.raises(KubeError) as err:
        client.resource("example.com/v1", "Nothing")
    assert str(err.value) == "the API server does not serve kind Nothing in example.com/v1 (is its CRD installed?)"
    api.route("GET", "/api/v1", (200, {"resources": [{"name": "configmaps", "kind": "ConfigMap", "namespaced": True}]}))
    assert client.resource("v1", "ConfigMap").path("ns", "a") == PATH


# -- TLS ------------------------------------------------------------------------------------------------------------

def test_the_servers_certificate_is_verified_against_the_kubeconfig_ca(pki, tls_api):
    tls_api.route("GET", PATH, OK)
    assert make_client(tls_api.url, cluster={"certificate-authority-data": b64(pki["ca"])}).request("GET", PATH)[0] == 200
    assert make_client(tls_api.url, cluster={"certificate-authority": pki["ca_file"]}).request("GET", PATH)[0] == 200
    client = make_client(tls_api.url, cluster={"certificate-authority-data": b64(pki["other_ca"])}, retries=8)
    started = time.time()
    with pytest.raises(KubeError) as err:
        client.request("GET", PATH)
    # An untrusted certificate stays untrusted: one attempt, at once, and the server answered no request.
    assert "after 1 attempts" in str(err.value) and "CERTIFICATE_VERIFY_FAILED" in str(err.value), str(err.value)
    assert time.time() - started < 1.0 and tls_api.count() == 2
    assert tls_api.count("GET", PATH) == 2  # the refused handshakes never reached the handler


def test_verification_can_be_turned_off_by_kubeconfig_or_option(pki, tls_api):
    tls_api.route("GET", PATH, OK)
    wrong_ca = {"certificate-authority-data": b64(pki["other_ca"])}
    assert make_client(tls_api.url, cluster=dict(wrong_ca, **{"insecure-skip-tls-verify": True})).request(
        "GET", PATH)[0] == 200
    assert make_client(tls_api.url, cluster=wrong_ca, validate_certs=False).request("GET", PATH)[0] == 200
    # validate_certs: true wins over the kubeconfig's insecure-skip-tls-verify.
    client = make_client(tls_api.url, cluster=dict(wrong_ca, **{"insecure-skip-tls-verify": True}),
                         validate_certs=True, retries=0)
    with pytest.raises(KubeError):
        client.request("GET", PATH)


def test_tls_server_name_is_sent_and_checked(pki):
    server = https_api(pki, cert="named")  # a certificate for kube.internal only, served at 127.0.0.1
    try:
        server.route("GET", PATH, OK)
        cluster = {"certificate-authority-data": b64(pki["ca"]), "tls-server-name": "kube.internal"}
        assert make_client(server.url, cluster=cluster).request("GET", PATH)[0] == 200
        client = make_client(server.url, cluster={"certificate-authority-data": b64(pki["ca"])}, retries=0)
        with pytest.raises(KubeError) as err:
            client.request("GET", PATH)
        assert "127.0.0.1" in str(err.value) and "CERTIFICATE_VERIFY_FAILED" in str(err.value)
    finally:
        server.stop()


def test_client_certificates_from_data_or_files_are_accepted(pki, tmp_path, monkeypatch):
    server = https_api(pki, client_ca=pki["ca"])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    try:
        server.route("GET", PATH, lambda seen: (200, {"user": seen["peer"]}) if seen["peer"] else (401, {}))
        cluster = {"certificate-authority-data": b64(pki["ca"])}
        cert, key = pki["pem"]["client"]
        by_data = make_client(server.url, cluster=cluster,
                              user={"client-certificate-data": b64(cert), "client-key-data": b64(key)})
        assert by_data.request("GET", PATH)[1] == {"user": {"commonName": "tester", "organizationName": "testers"}}
        # The data went through private files that are gone once the TLS context holds them.
        assert os.listdir(str(tmp_path)) == []
        cert_file, key_file = pki["files"]["client"]
        by_files = make_client(server.url, cluster=cluster, user={"client-certificate": cert_file,
                                                                  "client-key": key_file})
        assert by_files.request("GET", PATH)[1]["user"]["commonName"] == "tester"
        by_options = make_client(server.url, cluster=cluster, client_cert=cert_file, client_key=key_file)
        assert by_options.request("GET", PATH)[1]["user"]["commonName"] == "tester"
        anonymous = make_client(server.url, cluster=cluster)
        with pytest.raises(KubeError) as err:
            anonymous.request("GET", PATH)
        assert err.value.status == 401
    finally:
        server.stop()


def test_a_key_that_does_not_match_the_certificate_fails_when_the_client_is_made(pki):
    cert = pki["pem"]["client"][0]
    other_key = pki["pem"]["stranger"][1]
    with pytest.raises(KubeError) as err:
        make_client("https://127.0.0.1:1", user={"client-certificate-data": b64(cert),
                                                 "client-key-data": b64(other_key)})
    assert "the client certificate and key cannot be loaded" in str(err.value)
    assert "BEGIN" not in str(err.value)


# -- credentials and headers --------------------------------------------------------------------------------------

def echo_headers(seen):
    return 200, {"authorization": seen["headers"].get("Authorization"),
                 "user": seen["headers"].get("Impersonate-User"),
                 "groups": seen["headers"].get_all("Impersonate-Group") or [],
                 "agent": seen["headers"].get("User-Agent")}


def test_token_token_file_and_basic_auth(api, tmp_path):
    api.route("GET", PATH, echo_headers)
    assert make_client(api.url, user={"token": "abc"}).request("GET", PATH)[1]["authorization"] == "Bearer abc"
    (tmp_path / "token").write_text("from-file\n")
    assert make_client(api.url, user={"tokenFile": str(tmp_path / "token")}).request(
        "GET", PATH)[1]["authorization"] == "Bearer from-file"
    assert make_client(api.url, user={"token": "abc"}, api_key="opt").request(
        "GET", PATH)[1]["authorization"] == "Bearer opt"
    basic = make_client(api.url, user={"username": "u", "password": "p"}).request("GET", PATH)[1]
    assert basic["authorization"] == "Basic " + b64("u:p")


def test_impersonation_sends_one_header_per_group(api):
    api.route("GET", PATH, echo_headers)
    seen = make_client(api.url, impersonate_user="alice", impersonate_groups=["g1", "g2"]).request("GET", PATH)[1]
    # One header per group: the API server would read "g1,g2" as one group.
    assert (seen["user"], seen["groups"], seen["agent"]) == ("alice", ["g1", "g2"], "c5c3.cobaltcore")
    assert seen["authorization"] is None


def test_k8s_auth_variables_fill_unset_options(api, monkeypatch):
    api.route("GET", PATH, echo_headers)
    monkeypatch.setenv("K8S_AUTH_API_KEY", "env-token")
    monkeypatch.setenv("K8S_AUTH_IMPERSONATE_USER", "bob")
    monkeypatch.setenv("K8S_AUTH_IMPERSONATE_GROUPS", "a,b")
    seen = make_client(api.url, user={"token": "kubeconfig-token"}).request("GET", PATH)[1]
    assert (seen["authorization"], seen["user"], seen["groups"]) == ("Bearer env-token", "bob", ["a", "b"])
    seen = make_client(api.url, api_key="option-token", impersonate_user="carol").request("GET", PATH)[1]
    assert (seen["authorization"], seen["user"]) == ("Bearer option-token", "carol")


def test_credential_errors_name_the_problem_without_the_secret():
    with pytest.raises(KubeError) as err:
        make_client("https://127.0.0.1:1", user={"client-key-data": "!!" + "hunter2"})
    assert str(err.value).startswith("cannot load Kubernetes credentials: the kubeconfig given as a dict, "
                                     "context test: client-key-data of user test is not")
    assert "hunter2" not in str(err.value)


def plugin(tmp_path, body):
    path = tmp_path / "plugin"
    path.write_text("#!%s\n%s" % (sys.executable, textwrap.dedent(body)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


COUNTING_PLUGIN = """
import json, os
count_file = os.environ["COUNT_FILE"]
count = int(open(count_file).read()) + 1 if os.path.exists(count_file) else 1
open(count_file, "w").write(str(count))
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": "t%d" % count, "expirationTimestamp": os.environ["EXPIRES"]}}))
"""


def exec_user(tmp_path, expires="2099-01-01T00:00:00Z"):
    return {"exec": {"apiVersion": EXEC, "command": plugin(tmp_path, COUNTING_PLUGIN), "interactiveMode": "Never",
                     "env": [{"name": "COUNT_FILE", "value": str(tmp_path / "count")},
                             {"name": "EXPIRES", "value": expires}]}}


def test_exec_plugin_token_is_used_and_fetched_again_after_a_401(api, tmp_path):
    api.route("GET", PATH, lambda seen: (200, {}) if seen["headers"]["Authorization"] == "Bearer t2"
              else (401, {"reason": "Unauthorized", "message": "token revoked"}))
    client = make_client(api.url, user=exec_user(tmp_path))
    assert (tmp_path / "count").read_text() == "1"
    assert client.request("GET", PATH)[0] == 200
    assert (tmp_path / "count").read_text() == "2"
    assert [s["headers"]["Authorization"] for s in api.seen] == ["Bearer t1", "Bearer t2"]
    # Only once per request: a credential the server keeps refusing fails.
    api.route("GET", PATH, (401, {"reason": "Unauthorized", "message": "no"}))
    with pytest.raises(KubeError) as err:
        client.request("GET", PATH)
    assert err.value.status == 401 and (tmp_path / "count").read_text() == "3"


def test_an_expired_exec_credential_is_fetched_again_before_the_request(api, tmp_path):
    api.route("GET", PATH, echo_headers)
    client = make_client(api.url, user=exec_user(tmp_path, expires="2000-01-01T00:00:00Z"))
    assert client.request("GET", PATH)[1]["authorization"] == "Bearer t2"
    assert client.request("GET", PATH)[1]["authorization"] == "Bearer t3"


def test_exec_plugin_client_certificate_is_accepted(pki, tmp_path):
    server = https_api(pki, client_ca=pki["ca"])
    cert_file, key_file = pki["files"]["client"]
    script = plugin(tmp_path, """
        import json, os
        print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                          "status": {"clientCertificateData": open(os.environ["CERT"]).read(),
                                     "clientKeyData": open(os.environ["KEY"]).read()}}))
        """)
    try:
        server.route("GET", PATH, lambda seen: (200, {"user": seen["peer"]}) if seen["peer"] else (401, {}))
        client = make_client(server.url, cluster={"certificate-authority-data": b64(pki["ca"])}, user={"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1", "command": script,
            "env": [{"name": "CERT", "value": cert_file}, {"name": "KEY", "value": key_file}]}})
        assert client.request("GET", PATH)[1]["user"]["commonName"] == "tester"
    finally:
        server.stop()


def test_exec_plugin_failure_is_a_credentials_error(tmp_path):
    script = plugin(tmp_path, "import sys\nsys.stderr.write('please log in')\nsys.exit(1)\n")
    with pytest.raises(KubeError) as err:
        make_client("https://127.0.0.1:1", user={"exec": {"apiVersion": EXEC, "command": script}})
    assert str(err.value).endswith("exec plugin of user test: %s failed with exit code 1: please log in" % script)


def jwt(claims):
    def part(data):
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")
    return "%s.%s.%s" % (part({"alg": "none"}), part(claims), "c2ln")


def test_a_legacy_auth_provider_user_goes_through_the_kubernetes_package(api, monkeypatch):
    api.route("GET", PATH, echo_headers)
    token = jwt({"sub": "alice", "exp": int(time.time()) + 3600})
    provider = {"id-token": token, "idp-issuer-url": "https://idp.invalid", "client-id": "kube"}
    user = {"auth-provider": {"name": "oidc", "config": provider}}
    assert make_client(api.url, user=user).request("GET", PATH)[1]["authorization"] == "Bearer " + token
    monkeypatch.setitem(sys.modules, "kubernetes", None)  # as if it were not installed
    with pytest.raises(KubeError) as err:
        make_client(api.url, user=user)
    assert "auth-provider oidc needs the Python package kubernetes" in str(err.value)
    assert token not in str(err.value)


def test_the_common_case_imports_neither_the_kubernetes_package_nor_urllib3(api, tmp_path):
    # A fresh interpreter: this test process has imported kubernetes already (the test above).
    api.route("GET", PATH, OK)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(kubeconfig(api.url, user={"token": "t"})))
    code = textwrap.dedent("""
        import sys
        from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.client import KubeClient
        client = KubeClient({"kubeconfig": %r})
        assert client.request("GET", %r)[0] == 200
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("kubernetes", "yaml", "requests", "urllib3")))
        """ % (str(path), PATH))
    import subprocess
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_requests_of_a_call_share_a_kept_alive_connection_and_a_closed_one_is_replaced(api):
    api.route("GET", PATH, OK)
    client = make_client(api.url)
    ports = set()
    for dummy in range(3):
        assert client.request("GET", PATH)[0] == 200
        ports.add(api.seen[-1]["client_port"])
    assert len(ports) == 1
    # The server drops idle connections (a restart, its idle timeout): the next request opens another one.
    for conn in client.pool.idle:
        conn.sock.shutdown(socket.SHUT_RDWR)
    assert client.request("GET", PATH)[0] == 200
    assert api.seen[-1]["client_port"] not in ports
    assert client.requests == {"GET": 4}


# -- proxies ----------------------------------------------------------------------------------------------------

def test_requests_go_through_the_proxy_unless_no_proxy_covers_the_server(api):
    api.route("GET", "http://kube.invalid:6443" + PATH, OK)  # a proxy sees the absolute URL
    api.route("GET", PATH, OK)
    client = make_client("http://kube.invalid:6443", proxy=api.url)
    assert client.request("GET", PATH)[0] == 200
    assert api.seen[-1]["path"] == "http://kube.invalid:6443" + PATH
    direct = make_client(api.url, proxy="http://127.0.0.1:%d" % free_port(), no_proxy="localhost,127.0.0.1")
    assert direct.request("GET", PATH)[0] == 200
    assert api.seen[-1]["path"] == PATH


def test_proxy_headers_reach_the_proxy(api):
    api.route("GET", "http://kube.invalid:6443" + PATH,
              lambda seen: (200, {"proxy": seen["headers"].get("Proxy-Authorization")}))
    client = make_client("http://kube.invalid:6443", proxy=api.url, proxy_headers={"proxy_basic_auth": "p:q"})
    assert client.request("GET", PATH)[1] == {"proxy": "Basic " + b64("p:q")}
