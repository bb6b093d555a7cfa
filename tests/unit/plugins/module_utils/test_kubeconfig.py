# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubeconfig loader: files and dicts, kubectl's merge rule, contexts, options and K8S_AUTH_*,
exec credential plugins, proxies; errors name what is wrong and never a secret."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import json
import os
import stat
import sys
import textwrap

import pytest
import yaml

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.k8s.kubeconfig import (
    ExecPlugin, auth_options, bypasses_proxy, environment_proxy, load, parse_timestamp, resolve)

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\n"
SECRET = "s3cr3t-token-value"
EXEC = "client.authentication.k8s.io/v1"


def b64(text):
    return base64.b64encode(text.encode()).decode()


def doc(name="lab", server="https://127.0.0.1:6443", user=None, current=True, cluster=None):
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": name, "cluster": dict({"server": server}, **(cluster or {}))}],
        "users": [{"name": name, "user": user if user is not None else {"token": SECRET}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
    }
    if current:
        config["current-context"] = name
    return config


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return str(path)


def problems(call, *args, **kwargs):
    with pytest.raises(InputError) as err:
        call(*args, **kwargs)
    return str(err.value)


# -- files, dicts and merging -----------------------------------------------------------------------------

def test_a_dict_and_a_file_give_the_same_endpoint(tmp_path):
    data = doc(user={"token": SECRET}, cluster={"certificate-authority-data": b64(PEM), "tls-server-name": "kube"})
    path = write(tmp_path / "config", data)
    for source in (data, path):
        endpoint = resolve({"kubeconfig": source}, environ={})
        assert endpoint.host == "https://127.0.0.1:6443"
        assert endpoint.ca_data == PEM and endpoint.ca_file is None
        assert endpoint.tls_server_name == "kube"
        assert endpoint.token == SECRET and endpoint.verify is True


def test_json_kubeconfig_files_are_read_without_yaml(tmp_path):
    path = write(tmp_path / "config.json", json.dumps(doc()))
    assert resolve({"kubeconfig": path}, environ={}).token == SECRET


def test_kubeconfig_env_with_several_files_merges_by_name_first_wins(tmp_path):
    first = doc("a", server="https://first:1")
    del first["current-context"]
    second = doc("a", server="https://second:2")
    second["clusters"].append({"name": "b", "cluster": {"server": "https://b:3"}})
    second["contexts"].append({"name": "b", "context": {"cluster": "b", "user": "a"}})
    second["current-context"] = "b"
    paths = [write(tmp_path / "one", first), str(tmp_path / "missing"), write(tmp_path / "two", second)]
    environ = {"KUBECONFIG": os.pathsep.join(paths)}
    # current-context comes from the first file that sets one; cluster "a" from the first that defines it.
    assert resolve({}, environ=environ).host == "https://b:3"
    assert resolve({"context": "a"}, environ=environ).host == "https://first:1"
    config = load(None, environ)
    assert sorted(config.clusters) == ["a", "b"]
    assert str(tmp_path / "missing") not in config.source


def test_the_kubeconfig_option_takes_several_paths_too_and_wins_over_the_environment(tmp_path):
    one = write(tmp_path / "one", doc("one", server="https://one:1"))
    two = write(tmp_path / "two", doc("two", server="https://two:2"))
    environ = {"KUBECONFIG": two, "K8S_AUTH_KUBECONFIG": two}
    assert resolve({"kubeconfig": os.pathsep.join([one, two])}, environ=environ).host == "https://one:1"
    assert resolve({"kubeconfig": one, "context": "one"}, environ=environ).host == "https://one:1"
    assert resolve({}, environ={"K8S_AUTH_KUBECONFIG": two}).host == "https://two:2"


def test_default_kubeconfig_is_read_from_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    write(tmp_path / ".kube" / "config", doc(server="https://home:1"))
    assert resolve({}, environ={}).host == "https://home:1"


def test_relative_paths_count_from_the_file_that_holds_them(tmp_path):
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "ca.crt").write_text(PEM)
    (tmp_path / "certs" / "token").write_text(SECRET + "\n")
    path = write(tmp_path / "nested" / "config", doc(
        cluster={"certificate-authority": "../certs/ca.crt"}, user={"tokenFile": "../certs/token"}))
    endpoint = resolve({"kubeconfig": path}, environ={})
    assert os.path.samefile(endpoint.ca_file, str(tmp_path / "certs" / "ca.crt"))
    assert endpoint.token == SECRET  # read and stripped


def test_data_wins_over_files_and_token_over_token_file(tmp_path):
    (tmp_path / "other").write_text("other-token")
    path = write(tmp_path / "config", doc(
        cluster={"certificate-authority-data": b64(PEM), "certificate-authority": "nowhere.crt"},
        user={"client-certificate-data": b64(PEM), "client-certificate": "nowhere.crt",
              "client-key-data": b64(KEY), "client-key": "nowhere.key",
              "token": SECRET, "tokenFile": "other"}))
    endpoint = resolve({"kubeconfig": path}, environ={})
    assert (endpoint.ca_data, endpoint.cert_data, endpoint.key_data) == (PEM, PEM, KEY)
    assert (endpoint.ca_file, endpoint.cert_file, endpoint.key_file) == (None, None, None)
    assert endpoint.token == SECRET


def test_insecure_skip_tls_verify_and_proxy_url_of_the_cluster():
    endpoint = resolve({"kubeconfig": doc(cluster={"insecure-skip-tls-verify": True,
                                                   "proxy-url": "http://proxy:3128"})}, environ={})
    assert endpoint.verify is False and endpoint.proxy == "http://proxy:3128"
    assert resolve({"kubeconfig": doc(cluster={"insecure-skip-tls-verify": True}), "validate_certs": True},
                   environ={}).verify is True


# -- errors: what is wrong, never a value -------------------------------------------------------------------

def test_unknown_context_lists_the_known_ones():
    message = problems(resolve, {"kubeconfig": doc("a"), "context": "b"}, environ={})
    assert message == "context b is not in the kubeconfig given as a dict (contexts: a)"


def test_no_current_context_is_named():
    message = problems(resolve, {"kubeconfig": doc("a", current=False)}, environ={})
    assert "sets no current-context" in message and "contexts: a" in message


def test_a_context_naming_a_missing_cluster_or_user_is_named(tmp_path):
    broken = doc("a")
    broken["contexts"].append({"name": "b", "context": {"cluster": "gone", "user": "a"}})
    broken["contexts"].append({"name": "c", "context": {"cluster": "a", "user": "gone"}})
    path = write(tmp_path / "config", broken)
    assert problems(resolve, {"kubeconfig": path, "context": "b"}, environ={}) == \
        "context b names cluster gone, which kubeconfig %s does not define" % path
    assert "names user gone" in problems(resolve, {"kubeconfig": path, "context": "c"}, environ={})


def test_a_cluster_without_server_and_a_server_that_is_no_url():
    assert "cluster lab has no server" in problems(resolve, {"kubeconfig": doc(server="")}, environ={})
    assert "is not an http(s):// URL" in problems(resolve, {"kubeconfig": doc(server="127.0.0.1:6443")}, environ={})


def test_bad_base64_or_pem_names_field_and_user_without_the_value():
    bad = "bm90IGEgcGVt" + SECRET  # base64 decoding garbage
    message = problems(resolve, {"kubeconfig": doc(user={"client-certificate-data": b64(PEM),
                                                         "client-key-data": bad})}, environ={})
    assert "client-key-data of user lab" in message
    assert bad not in message and SECRET not in message
    message = problems(resolve, {"kubeconfig": doc(cluster={"certificate-authority-data": b64("no pem")})},
                       environ={})
    assert "certificate-authority-data of cluster lab is not PEM" in message


def test_invalid_yaml_gives_the_place_not_the_line(tmp_path):
    path = write(tmp_path / "config", "users:\n- name: a\n  user: {token: %s\n" % SECRET)
    message = problems(resolve, {"kubeconfig": path}, environ={})
    assert message.startswith("kubeconfig %s is not valid YAML at line" % path)
    assert SECRET not in message


def test_a_kubeconfig_text_gives_the_same_endpoint_as_its_dict():
    config = doc(user={"token": SECRET})
    text = yaml.safe_dump(config)
    by_text, by_dict = resolve({"kubeconfig": text}, environ={}), resolve({"kubeconfig": config}, environ={})
    assert (by_text.host, by_text.token) == (by_dict.host, by_dict.token) == ("https://127.0.0.1:6443", SECRET)
    assert by_text.source == "the kubeconfig given as text, context lab"


@pytest.mark.parametrize("text", ["users: [{name: a, user: {token: %s}\n" % SECRET, "just-a-%s" % SECRET,
                                  "- %s\n- list\n" % SECRET])
def test_a_kubeconfig_text_that_is_unusable_is_never_echoed(text):
    message = problems(resolve, {"kubeconfig": text}, environ={})
    assert SECRET not in message
    assert message.startswith(("the kubeconfig given as text is not valid YAML at line", "kubeconfig names no"))


def test_a_kubeconfig_text_without_current_context_names_the_text_not_its_content():
    message = problems(resolve, {"kubeconfig": yaml.safe_dump(doc(current=False, user={"token": SECRET}))}, environ={})
    assert message == "the kubeconfig given as text sets no current-context and no context was given (contexts: lab)"


def test_missing_files_are_named(tmp_path):
    # A string that names no file may be a kubeconfig's text (or a token pasted by mistake): never echoed.
    message = problems(resolve, {"kubeconfig": str(tmp_path / "nope")}, environ={})
    assert message.startswith("kubeconfig names no existing file") and str(tmp_path) not in message
    assert "no kubeconfig found (KUBECONFIG=" in problems(resolve, {}, environ={"KUBECONFIG": str(tmp_path / "x")})
    message = problems(resolve, {"kubeconfig": doc(cluster={"certificate-authority": str(tmp_path / "ca.crt")})},
                       environ={})
    assert "certificate-authority of cluster lab: file %s does not exist" % (tmp_path / "ca.crt") in message
    assert "client_key file" in problems(resolve, {"kubeconfig": doc(), "client_key": str(tmp_path / "k")},
                                         environ={})


def test_a_client_certificate_without_its_key_is_refused():
    message = problems(resolve, {"kubeconfig": doc(user={"client-certificate-data": b64(PEM)})}, environ={})
    assert "client key is missing" in message


def test_malformed_documents_are_named(tmp_path):
    path = write(tmp_path / "config", "- a list\n")
    assert problems(resolve, {"kubeconfig": path}, environ={}) == \
        "kubeconfig %s is not a kubeconfig (a mapping with clusters, users and contexts)" % path
    assert "clusters must be a list" in problems(resolve, {"kubeconfig": {"clusters": "x"}}, environ={})
    assert "users[0] has no name" in problems(resolve, {"kubeconfig": {"users": [{"user": {}}]}}, environ={})
    assert "must be a path, a dict or a kubeconfig's text" in problems(resolve, {"kubeconfig": 5}, environ={})


# -- options and K8S_AUTH_* --------------------------------------------------------------------------------

def test_host_with_credentials_needs_no_kubeconfig():
    endpoint = resolve({"host": "https://10.0.0.1:6443", "api_key": SECRET},
                       environ={"KUBECONFIG": "/nonexistent/config"})
    assert endpoint.host == "https://10.0.0.1:6443" and endpoint.token == SECRET


def test_options_override_the_kubeconfig(tmp_path):
    ca = tmp_path / "ca.crt"
    ca.write_text(PEM)
    endpoint = resolve({"kubeconfig": doc(cluster={"certificate-authority-data": b64(PEM)}),
                        "host": "https://other:1", "api_key": "opt-token", "ca_cert": str(ca),
                        "username": "u", "password": "p", "impersonate_user": "alice",
                        "impersonate_groups": ["g1", "g2"]}, environ={})
    assert endpoint.host == "https://other:1" and endpoint.token == "opt-token"
    assert endpoint.ca_file == str(ca) and endpoint.ca_data is None
    assert (endpoint.username, endpoint.password) == ("u", "p")
    assert endpoint.impersonate_user == "alice" and endpoint.impersonate_groups == ["g1", "g2"]


def test_environment_variables_fill_unset_options_as_kubernetes_core_reads_them():
    environ = {"K8S_AUTH_HOST": "https://env:1", "K8S_AUTH_API_KEY": "env-token", "K8S_AUTH_VERIFY_SSL": "no",
               "K8S_AUTH_IMPERSONATE_GROUPS": "a, b,,c", "K8S_AUTH_PROXY_HEADERS_USER_AGENT": "agent"}
    opts = auth_options({}, environ)
    assert opts["host"] == "https://env:1" and opts["api_key"] == "env-token"
    assert opts["validate_certs"] is False
    assert opts["impersonate_groups"] == ["a", "b", "c"]
    assert opts["proxy_headers"] == {"user_agent": "agent"}
    # A given option wins; the option's own name (K8S_AUTH_VALIDATE_CERTS) is read before the client's.
    assert auth_options({"host": "https://opt:1"}, environ)["host"] == "https://opt:1"
    assert auth_options({}, dict(environ, K8S_AUTH_VALIDATE_CERTS="yes"))["validate_certs"] is True
    # Anything but a false word keeps verification on.
    assert auth_options({}, {"K8S_AUTH_VERIFY_SSL": "True "})["validate_certs"] is True
    endpoint = resolve({}, environ)
    assert endpoint.verify is False and endpoint.token == "env-token"


def test_context_option_from_the_environment(tmp_path):
    config = doc("a")
    config["clusters"].append({"name": "b", "cluster": {"server": "https://b:2"}})
    config["contexts"].append({"name": "b", "context": {"cluster": "b"}})
    path = write(tmp_path / "config", config)
    endpoint = resolve({}, environ={"KUBECONFIG": path, "K8S_AUTH_CONTEXT": "b"})
    assert endpoint.host == "https://b:2" and endpoint.token is None  # a context without user: anonymous


# -- proxies -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("host, no_proxy, bypass", [
    ("https://api.example.com:6443", "example.com", True),
    ("https://api.example.com:6443", ".example.com", True),
    ("https://example.com", "example.com", True),
    ("https://badexample.com", "example.com", False),
    ("https://api.example.com:6443", "api.example.com:443", False),
    ("https://api.example.com:6443", "api.example.com:6443", True),
    ("https://10.1.2.3:6443", "10.0.0.0/8", True),
    ("https://11.1.2.3:6443", "10.0.0.0/8", False),
    ("https://[fd00::1]:6443", "fd00::/8", True),
    ("https://anything", "*", True),
    ("https://anything", "", False),
])
def test_no_proxy_matching(host, no_proxy, bypass):
    assert bypasses_proxy(host, no_proxy) is bypass


def test_proxy_precedence_option_kubeconfig_environment():
    environ = {"https_proxy": "http://env:1", "HTTPS_PROXY": "http://ENV:1", "no_proxy": "internal"}
    assert environment_proxy("https://x", environ) == "http://env:1"
    assert environment_proxy("http://x", {"ALL_PROXY": "socks5://s:1"}) == "socks5://s:1"
    with_url = doc(cluster={"proxy-url": "http://kc:2"})
    assert resolve({"kubeconfig": doc()}, environ=environ).proxy == "http://env:1"
    assert resolve({"kubeconfig": with_url}, environ=environ).proxy == "http://kc:2"
    assert resolve({"kubeconfig": with_url, "proxy": "http://opt:3"}, environ=environ).proxy == "http://opt:3"
    assert resolve({"kubeconfig": doc(server="https://api.internal:1")}, environ=environ).proxy is None
    assert resolve({"kubeconfig": doc(), "no_proxy": "127.0.0.1"}, environ=environ).proxy is None


# -- exec credential plugins ---------------------------------------------------------------------------------

def plugin_script(tmp_path, body, name="plugin"):
    path = tmp_path / name
    path.write_text("#!%s\n%s" % (sys.executable, textwrap.dedent(body)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


TOKEN_PLUGIN = """
import json, os, sys
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential",
                  "status": {"token": "%s-%s-%s" % (sys.argv[1], os.environ["PLUGIN_ENV"],
                                                    info["spec"].get("cluster", {}).get("server", "none")),
                             "expirationTimestamp": "2030-01-02T03:04:05.123456789Z"}}))
"""


def test_exec_plugin_gets_args_env_and_cluster_info_and_returns_a_token(tmp_path):
    script = plugin_script(tmp_path, TOKEN_PLUGIN)
    exec_config = {"apiVersion": EXEC, "command": "./plugin", "args": ["arg"], "env": [{"name": "PLUGIN_ENV",
                                                                                       "value": "env"}],
                   "provideClusterInfo": True, "interactiveMode": "Never"}
    path = write(tmp_path / "config", doc(user={"exec": exec_config}))
    endpoint = resolve({"kubeconfig": path}, environ={})
    assert endpoint.exec_plugin.command == script  # relative to the kubeconfig
    credential = endpoint.exec_plugin.run()
    assert credential.token == "arg-env-https://127.0.0.1:6443"
    assert credential.expires == parse_timestamp("2030-01-02T03:04:05Z") + 0.123456
    assert not credential.expired(parse_timestamp("2030-01-02T03:00:00Z"))
    assert credential.expired(parse_timestamp("2030-01-02T03:04:00Z"))  # within the margin


def test_exec_plugin_without_cluster_info_and_v1beta1(tmp_path):
    plugin_script(tmp_path, TOKEN_PLUGIN)
    config = {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": str(tmp_path / "plugin"),
              "args": ["a"], "env": [{"name": "PLUGIN_ENV", "value": "b"}]}
    assert ExecPlugin(config, "u", "here").run().token == "a-b-none"


def test_exec_plugin_failures_name_the_plugin_not_its_output(tmp_path):
    failing = plugin_script(tmp_path, "import sys\nsys.stderr.write('no login\\n')\nsys.exit(3)\n", "failing")
    message = problems(ExecPlugin({"apiVersion": EXEC, "command": failing}, "u", "here").run)
    assert message == "here: exec plugin of user u: %s failed with exit code 3: no login" % failing
    leaky = plugin_script(tmp_path, "print('token: %s')\n" % SECRET, "leaky")
    message = problems(ExecPlugin({"apiVersion": EXEC, "command": leaky}, "u", "here").run)
    assert "did not print an ExecCredential as JSON" in message and SECRET not in message
    message = problems(ExecPlugin({"apiVersion": EXEC, "command": "no-such-plugin-anywhere",
                                   "installHint": "install it from example.com"}, "u", "here").run)
    assert "cannot run no-such-plugin-anywhere" in message and "(install it from example.com)" in message


@pytest.mark.parametrize("status, expected", [
    (None, "returned an ExecCredential without status"),
    ({}, "returned neither a token nor a client certificate and key"),
    ({"clientCertificateData": PEM}, "returned clientCertificateData without clientKeyData"),
    ({"token": SECRET, "expirationTimestamp": "tomorrow"}, "expirationTimestamp 'tomorrow', not RFC 3339"),
])
def test_exec_credential_validation(status, expected):
    plugin = ExecPlugin({"apiVersion": EXEC, "command": "x"}, "u", "here")
    output = {"apiVersion": EXEC, "kind": "ExecCredential"}
    if status is not None:
        output["status"] = status
    message = problems(plugin.parse, json.dumps(output))
    assert expected in message and SECRET not in message


def test_exec_credential_of_another_api_version_or_kind_is_refused():
    plugin = ExecPlugin({"apiVersion": EXEC, "command": "x"}, "u", "here")
    wrong = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
             "status": {"token": SECRET}}
    assert "answered with apiVersion client.authentication.k8s.io/v1beta1" in problems(plugin.parse, json.dumps(wrong))
    assert "printed no ExecCredential (kind Secret)" in problems(plugin.parse, json.dumps({"kind": "Secret"}))
    credential = plugin.parse(json.dumps({"apiVersion": EXEC, "kind": "ExecCredential",
                                          "status": {"clientCertificateData": PEM, "clientKeyData": KEY}}))
    assert (credential.cert_data, credential.key_data, credential.token, credential.expires) == (PEM, KEY, None, None)


def test_exec_configuration_errors():
    assert "apiVersion client.authentication.k8s.io/v1alpha1 is not supported" in problems(
        ExecPlugin, {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "x"}, "u", "here")
    assert "has no command" in problems(ExecPlugin, {"apiVersion": EXEC}, "u", "here")
    assert "needs a terminal" in problems(ExecPlugin, {"apiVersion": EXEC, "command": "x",
                                                       "interactiveMode": "Always"}, "u", "here")
    assert "env a list of {name, value}" in problems(ExecPlugin, {"apiVersion": EXEC, "command": "x",
                                                                  "env": {"A": "b"}}, "u", "here")


def test_api_key_option_replaces_exec_and_auth_provider_users():
    config = doc(user={"exec": {"apiVersion": EXEC, "command": "x"}, "auth-provider": {"name": "oidc"}})
    endpoint = resolve({"kubeconfig": config}, environ={})
    assert endpoint.exec_plugin is not None and endpoint.auth_provider[0] == "oidc"
    endpoint = resolve({"kubeconfig": config, "api_key": "t"}, environ={})
    assert endpoint.exec_plugin is None and endpoint.auth_provider is None


@pytest.mark.parametrize("text, seconds", [
    ("1970-01-01T00:00:10Z", 10.0),
    ("1970-01-01T01:00:10+01:00", 10.0),
    ("1970-01-01T00:00:10.5Z", 10.5),
    ("1970-01-01T00:00:10.123456789Z", 10.123456),
])
def test_timestamps(text, seconds):
    assert parse_timestamp(text) == pytest.approx(seconds)


def test_timestamps_without_zone_are_refused():
    assert parse_timestamp("2030-01-01T00:00:00") is None
    assert parse_timestamp("yesterday") is None and parse_timestamp(5) is None


def test_one_rfc_3339_reading_for_every_timestamp_the_api_servers_write():
    from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import timestamps
    utc = timestamps.parse_datetime("2026-11-27T01:00:00.123456789Z")
    assert utc.tzinfo is not None and utc.microsecond == 123456
    assert timestamps.parse_datetime("2026-11-27T02:00:00+01:00") == timestamps.parse_datetime("2026-11-27T01:00:00Z")
    assert timestamps.parse_datetime("2026-11-27T01:00:00") is None and timestamps.parse_datetime(None) is None
    now = timestamps.parse_timestamp("2026-11-27T01:00:10Z")
    assert timestamps.seconds_since("2026-11-27T01:00:00Z", now) == 10
    assert timestamps.seconds_since("2026-11-27T01:00:20Z", now) == 0      # a clock ahead: never negative
    assert timestamps.seconds_since("", now) is None
    server = {"metadata": {"managedFields": [
        {"manager": "a", "time": "2026-11-27T01:00:05Z"},
        {"manager": "b", "subresource": "status", "time": "2026-11-27T01:00:03Z"},
        {"manager": "a", "subresource": "status", "time": "2026-11-27T01:00:01Z"},
        {"manager": "a"}]}}
    assert timestamps.last_write(server) == "2026-11-27T01:00:05Z"
    assert timestamps.last_write(server, subresource="status") == "2026-11-27T01:00:03Z"
    assert timestamps.last_write(server, manager="a", subresource="status") == "2026-11-27T01:00:01Z"
    assert timestamps.last_write(server, manager="c") is None and timestamps.last_write(None) is None
