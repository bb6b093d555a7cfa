# -*- coding: utf-8 -*-
# Copyright (c) CobaltCore contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubeconfigs and kubernetes.core's auth options, read without the kubernetes package.

`resolve(auth)` turns the options of a module call (and their K8S_AUTH_*
variables) plus the kubeconfig they name into one `Endpoint`: server, TLS
material, credentials, proxy and impersonation. No network and no client
library: KubeClient builds its connection from the Endpoint. Kubeconfigs are
read as kubectl reads them: several files (`KUBECONFIG`, or a path option with
os.pathsep) merge by name, the first file that defines a name or a
current-context wins, and relative paths count from the file that holds them.
Exec credential plugins (client.authentication.k8s.io v1 and v1beta1) run
here; legacy `auth-provider` users are left to KubeClient.

Errors are InputErrors that name the file, context, cluster or user and the
field, never a value.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import base64
import binascii
import json
import os
import subprocess

from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common import masking
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.timestamps import parse_timestamp
from ansible_collections.c5c3.cobaltcore.plugins.module_utils.common.errors import InputError

# Environment variables kubernetes.core reads for the same options (its first name for each).
AUTH_ENV = {
    "kubeconfig": "K8S_AUTH_KUBECONFIG", "context": "K8S_AUTH_CONTEXT", "host": "K8S_AUTH_HOST",
    "api_key": "K8S_AUTH_API_KEY", "username": "K8S_AUTH_USERNAME", "password": "K8S_AUTH_PASSWORD",
    "validate_certs": "K8S_AUTH_VERIFY_SSL", "ca_cert": "K8S_AUTH_SSL_CA_CERT",
    "client_cert": "K8S_AUTH_CERT_FILE", "client_key": "K8S_AUTH_KEY_FILE", "proxy": "K8S_AUTH_PROXY",
    "no_proxy": "K8S_AUTH_NO_PROXY", "impersonate_user": "K8S_AUTH_IMPERSONATE_USER",
    "impersonate_groups": "K8S_AUTH_IMPERSONATE_GROUPS",
}
# kubernetes.core also reads K8S_AUTH_<option name> for the options named differently in the client;
# that name is looked at first.
AUTH_ENV_ALIASES = {
    "validate_certs": "K8S_AUTH_VALIDATE_CERTS", "ca_cert": "K8S_AUTH_CA_CERT",
    "client_cert": "K8S_AUTH_CLIENT_CERT", "client_key": "K8S_AUTH_CLIENT_KEY",
}
PROXY_HEADER_OPTIONS = ("proxy_basic_auth", "basic_auth", "user_agent")
FALSE_WORDS = ("0", "false", "no", "off")

DEFAULT_KUBECONFIG = "~/.kube/config"
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
EXEC_TIMEOUT = 120
# Paths in a kubeconfig, resolved against the directory of the file that holds them.
CLUSTER_PATHS = ("certificate-authority",)
USER_PATHS = ("client-certificate", "client-key", "tokenFile")


def auth_options(auth, environ=None):
    """kubernetes.core's auth options of a call: a given option wins over its K8S_AUTH_* variable."""
    environ = os.environ if environ is None else environ
    opts = {}
    for option, variable in AUTH_ENV.items():
        value = auth.get(option)
        if value is None:
            value = _env(environ, AUTH_ENV_ALIASES.get(option), variable)
            if value is not None:
                if option == "validate_certs":
                    value = value.strip().lower() not in FALSE_WORDS
                elif option == "impersonate_groups":
                    value = [group.strip() for group in value.split(",") if group.strip()]
        opts[option] = value
    headers = auth.get("proxy_headers")
    if headers is None:
        headers = {}
        for option in PROXY_HEADER_OPTIONS:
            value = environ.get("K8S_AUTH_PROXY_HEADERS_%s" % option.upper())
            if value is not None:
                headers[option] = value
    opts["proxy_headers"] = dict((k, v) for k, v in (headers or {}).items() if v)
    return opts


def _env(environ, *names):
    for name in names:
        if name and environ.get(name):
            return environ[name]
    for name in names:
        if name and name in environ:
            return environ[name]
    return None


# -- reading and merging -----------------------------------------------------------------------------

class Kubeconfig:
    """Kubeconfig documents merged by name; entries keep the directory their relative paths count from."""

    def __init__(self, source):
        self.source = source
        self.clusters = {}
        self.users = {}
        self.contexts = {}
        self.current_context = None

    def add(self, document, where, base_dir=None):
        """Merge one document in; names already defined by an earlier one are kept (kubectl's rule)."""
        if document is None:
            return
        if not isinstance(document, dict):
            raise InputError(["%s is not a kubeconfig (a mapping with clusters, users and contexts)" % where])
        for section, key, target in (("clusters", "cluster", self.clusters), ("users", "user", self.users),
                                     ("contexts", "context", self.contexts)):
            entries = document.get(section) or []
            if not isinstance(entries, list):
                raise InputError(["%s: %s must be a list" % (where, section)])
            for index, entry in enumerate(entries):
                name = entry.get("name") if isinstance(entry, dict) else None
                if not isinstance(name, str) or not name:
                    raise InputError(["%s: %s[%d] has no name" % (where, section, index)])
                body = entry.get(key)
                if body is None:
                    body = {}
                if not isinstance(body, dict):
                    raise InputError(["%s: %s %s: %s must be a mapping" % (where, section[:-1], name, key)])
                if name not in target:
                    target[name] = (_resolve_paths(body, key, base_dir), where)
        if not self.current_context and document.get("current-context"):
            self.current_context = document["current-context"]

    def select(self, context=None):
        """(context name, cluster name, cluster, user name or None, user) of a context or the current one."""
        name = context or self.current_context
        known = ", ".join(sorted(self.contexts)) or "none"
        if not name:
            raise InputError(["%s sets no current-context and no context was given (contexts: %s)"
                              % (self.source, known)])
        if name not in self.contexts:
            raise InputError(["context %s is not in %s (contexts: %s)" % (name, self.source, known)])
        body = self.contexts[name][0]
        cluster_name, user_name = body.get("cluster"), body.get("user")
        if not cluster_name or cluster_name not in self.clusters:
            raise InputError(["context %s names cluster %s, which %s does not define"
                              % (name, cluster_name or "(none)", self.source)])
        if user_name and user_name not in self.users:
            raise InputError(["context %s names user %s, which %s does not define" % (name, user_name, self.source)])
        user = self.users[user_name][0] if user_name else {}
        return name, cluster_name, self.clusters[cluster_name][0], user_name, user


def _resolve_paths(body, key, base_dir):
    if not base_dir:
        return body
    body = dict(body)
    for field in CLUSTER_PATHS if key == "cluster" else USER_PATHS if key == "user" else ():
        if isinstance(body.get(field), str) and body[field]:
            body[field] = os.path.normpath(os.path.join(base_dir, os.path.expanduser(body[field])))
    command = (body.get("exec") or {}).get("command") if key == "user" and isinstance(body.get("exec"), dict) else None
    # kubectl: a command with a path separator counts from the kubeconfig; a bare name is looked up in PATH.
    if isinstance(command, str) and os.sep in command and not os.path.isabs(command):
        body["exec"] = dict(body["exec"], command=os.path.normpath(os.path.join(base_dir, command)))
    return body


def parse_document(text, where):
    """A kubeconfig file's content (YAML or JSON). Errors give the place, not the text."""
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    try:
        import yaml
    except ImportError:
        raise InputError(["reading %s needs the Python package PyYAML" % where])
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        place = " at line %d, column %d" % (mark.line + 1, mark.column + 1) if mark else ""
        raise InputError(["%s is not valid YAML%s" % (where, place)])


# The message for a kubeconfig string that names no file and holds no kubeconfig: never its value.
NOT_A_KUBECONFIG = ("kubeconfig names no existing file and is no kubeconfig's text either (a YAML mapping with "
                    "clusters, users and contexts); its value is not shown, as it may hold credentials")


def load(kubeconfig=None, environ=None):
    """The Kubeconfig of a dict, a path (several joined by os.pathsep), a kubeconfig's text, or else
    $KUBECONFIG or ~/.kube/config. A string is a path only when it names a file: any other is read as text."""
    environ = os.environ if environ is None else environ
    if isinstance(kubeconfig, dict):
        config = Kubeconfig("the kubeconfig given as a dict")
        config.add(kubeconfig, config.source)
        return config
    if kubeconfig is not None and not isinstance(kubeconfig, str):
        raise InputError(["kubeconfig must be a path, a dict or a kubeconfig's text, not %s"
                          % type(kubeconfig).__name__])
    if kubeconfig and not masking.kubeconfig_is_path(kubeconfig):
        return _from_text(kubeconfig)
    if kubeconfig:
        origin, explicit = kubeconfig, True
    elif environ.get("KUBECONFIG"):
        origin, explicit = environ["KUBECONFIG"], False
    else:
        origin, explicit = DEFAULT_KUBECONFIG, False
    paths = [os.path.expanduser(p) for p in origin.split(os.pathsep) if p]
    existing = [p for p in paths if os.path.exists(p)]
    if not existing:
        where = "KUBECONFIG=%s" % origin if environ.get("KUBECONFIG") and not explicit else origin
        raise InputError(["no kubeconfig found (%s): set kubeconfig, or host and credentials" % where])
    config = Kubeconfig("kubeconfig %s" % os.pathsep.join(existing))
    for path in existing:
        where = "kubeconfig %s" % path
        try:
            with open(path) as handle:
                text = handle.read()
        except (IOError, OSError) as exc:
            raise InputError(["cannot read %s: %s" % (where, exc.strerror or exc)])
        config.add(parse_document(text, where), where, os.path.dirname(os.path.abspath(path)))
    return config


def _from_text(text):
    """The Kubeconfig of a kubeconfig's text; its errors name the field, never a value."""
    where = "the kubeconfig given as text"
    document = parse_document(text, where)
    if not isinstance(document, dict):
        raise InputError([NOT_A_KUBECONFIG])
    config = Kubeconfig(where)
    config.add(document, where)
    return config


# -- the endpoint ---------------------------------------------------------------------------------------

class Endpoint:
    """Everything KubeClient needs to connect, resolved. PEM material is text; files are paths."""

    def __init__(self, host, source):
        self.host = host
        self.source = source          # for messages: where the settings came from
        self.verify = True
        self.ca_data = None
        self.ca_file = None
        self.tls_server_name = None
        self.cert_data = None
        self.cert_file = None
        self.key_data = None
        self.key_file = None
        self.token = None
        self.username = None
        self.password = None
        self.proxy = None
        self.proxy_headers = {}
        self.impersonate_user = None
        self.impersonate_groups = []
        self.exec_plugin = None       # ExecPlugin: run for a token or client certificate
        self.auth_provider = None     # (name, minimal kubeconfig dict, context) for the legacy fallback

    @property
    def is_https(self):
        return self.host.lower().startswith("https://")


def resolve(auth, environ=None):
    """The Endpoint of kubernetes.core-style auth options (a dict of option: value)."""
    environ = os.environ if environ is None else environ
    opts = auth_options(auth, environ)
    kubeconfig, context, host = opts["kubeconfig"], opts["context"], opts["host"]
    if kubeconfig or context or not host:
        config = load(kubeconfig, environ)
        endpoint = from_kubeconfig(config, context)
    else:
        endpoint = Endpoint(host, "the host option")
    _apply_options(endpoint, opts, environ)
    return endpoint


def from_kubeconfig(config, context=None):
    context_name, cluster_name, cluster, user_name, user = config.select(context)
    where = "%s, context %s" % (config.source, context_name)
    server = cluster.get("server")
    if not server or not isinstance(server, str):
        raise InputError(["%s: cluster %s has no server" % (where, cluster_name)])
    endpoint = Endpoint(server, where)
    what = "cluster %s" % cluster_name
    endpoint.verify = not _flag(cluster.get("insecure-skip-tls-verify"))
    endpoint.ca_data = _pem(cluster, "certificate-authority-data", what, where)
    if endpoint.ca_data is None:
        endpoint.ca_file = _file(cluster, "certificate-authority", what, where)
    endpoint.tls_server_name = cluster.get("tls-server-name") or None
    endpoint.proxy = cluster.get("proxy-url") or None
    if not user:
        return endpoint
    what = "user %s" % user_name
    endpoint.cert_data = _pem(user, "client-certificate-data", what, where)
    if endpoint.cert_data is None:
        endpoint.cert_file = _file(user, "client-certificate", what, where)
    endpoint.key_data = _pem(user, "client-key-data", what, where)
    if endpoint.key_data is None:
        endpoint.key_file = _file(user, "client-key", what, where)
    # kubectl: token wins over tokenFile.
    endpoint.token = user.get("token") or None
    if not endpoint.token and user.get("tokenFile"):
        path = _file(user, "tokenFile", what, where)
        try:
            with open(path) as handle:
                endpoint.token = handle.read().strip() or None
        except (IOError, OSError) as exc:
            raise InputError(["%s: tokenFile %s of %s cannot be read: %s" % (where, path, what, exc.strerror or exc)])
    endpoint.username = user.get("username") or None
    endpoint.password = user.get("password") or None
    if user.get("exec"):
        endpoint.exec_plugin = ExecPlugin(user["exec"], user_name, where, _cluster_info(endpoint, cluster))
    if user.get("auth-provider"):
        provider = user["auth-provider"]
        name = provider.get("name") if isinstance(provider, dict) else None
        # Only what the provider needs: TLS stays with the client (the kubernetes loader would write
        # certificate data to temporary files it never removes).
        minimal = {
            "apiVersion": "v1", "kind": "Config", "current-context": context_name,
            "clusters": [{"name": cluster_name, "cluster": {"server": server}}],
            "users": [{"name": user_name, "user": {"auth-provider": provider}}],
            "contexts": [{"name": context_name, "context": {"cluster": cluster_name, "user": user_name}}],
        }
        endpoint.auth_provider = (name or "(unnamed)", minimal, context_name)
    return endpoint


def _apply_options(endpoint, opts, environ):
    """The Ansible options override what the kubeconfig says, as kubernetes.core's do."""
    if opts["host"]:
        endpoint.host = opts["host"]
    if opts["api_key"]:
        endpoint.token = opts["api_key"]
        endpoint.exec_plugin = endpoint.auth_provider = None
    if opts["username"]:
        endpoint.username, endpoint.password = opts["username"], opts["password"]
    for option, data, attribute in (("ca_cert", "ca_data", "ca_file"), ("client_cert", "cert_data", "cert_file"),
                                    ("client_key", "key_data", "key_file")):
        if opts[option]:
            path = os.path.expanduser(opts[option])
            if not os.path.isfile(path):
                raise InputError(["%s file %s does not exist" % (option, path)])
            setattr(endpoint, data, None)
            setattr(endpoint, attribute, path)
    if opts["validate_certs"] is not None:
        endpoint.verify = bool(opts["validate_certs"])
    if opts["proxy"]:
        endpoint.proxy = opts["proxy"]
    if not endpoint.proxy:
        endpoint.proxy = environment_proxy(endpoint.host, environ)
    no_proxy = opts["no_proxy"] if opts["no_proxy"] is not None else _env(environ, "no_proxy", "NO_PROXY")
    if endpoint.proxy and no_proxy and bypasses_proxy(endpoint.host, no_proxy):
        endpoint.proxy = None
    endpoint.proxy_headers = opts["proxy_headers"]
    endpoint.impersonate_user = opts["impersonate_user"] or None
    endpoint.impersonate_groups = list(opts["impersonate_groups"] or [])
    has_cert = bool(endpoint.cert_data or endpoint.cert_file)
    has_key = bool(endpoint.key_data or endpoint.key_file)
    if has_cert != has_key:
        raise InputError(["%s: a client certificate needs its key and a key its certificate (%s is missing)"
                          % (endpoint.source, "client key" if has_cert else "client certificate")])
    if not endpoint.host.lower().startswith(("https://", "http://")):
        raise InputError(["%s: the server %s is not an http(s):// URL" % (endpoint.source, endpoint.host)])


def _flag(value):
    if isinstance(value, str):
        return value.strip().lower() not in FALSE_WORDS + ("",)
    return bool(value)


def _pem(body, field, what, where):
    """Base64 PEM data of a kubeconfig field, decoded; None when the field is not set."""
    value = body.get(field)
    if not value:
        return None
    try:
        text = base64.b64decode(value).decode("utf-8")
    except (TypeError, ValueError, binascii.Error, UnicodeDecodeError):
        raise InputError(["%s: %s of %s is not base64-encoded PEM" % (where, field, what)])
    if "-----BEGIN " not in text:
        raise InputError(["%s: %s of %s is not PEM (no BEGIN line after base64 decoding)" % (where, field, what)])
    return text


def _file(body, field, what, where):
    path = body.get(field)
    if not path:
        return None
    if not isinstance(path, str):
        raise InputError(["%s: %s of %s must be a path" % (where, field, what)])
    if not os.path.isfile(path):
        raise InputError(["%s: %s of %s: file %s does not exist" % (where, field, what, path)])
    return path


def _cluster_info(endpoint, cluster):
    """The cluster as an exec plugin sees it (spec.cluster, when provideClusterInfo is set)."""
    info = {"server": endpoint.host}
    if endpoint.tls_server_name:
        info["tls-server-name"] = endpoint.tls_server_name
    if not endpoint.verify:
        info["insecure-skip-tls-verify"] = True
    if cluster.get("certificate-authority-data"):
        info["certificate-authority-data"] = cluster["certificate-authority-data"]
    elif endpoint.ca_file:
        try:
            with open(endpoint.ca_file, "rb") as handle:
                info["certificate-authority-data"] = base64.b64encode(handle.read()).decode("ascii")
        except (IOError, OSError):
            pass
    if endpoint.proxy:
        info["proxy-url"] = endpoint.proxy
    for extension in cluster.get("extensions") or []:
        if isinstance(extension, dict) and extension.get("name") == "client.authentication.k8s.io/exec":
            info["config"] = extension.get("extension")
    return info


# -- proxies ----------------------------------------------------------------------------------------------

def environment_proxy(host, environ):
    """The proxy of https_proxy/http_proxy/all_proxy for a server URL (lower case first, as curl)."""
    scheme = host.split("://", 1)[0].lower()
    return _env(environ, "%s_proxy" % scheme, "%s_PROXY" % scheme.upper(), "all_proxy", "ALL_PROXY")


def bypasses_proxy(host, no_proxy):
    """Whether a no_proxy list (hosts, .domains, host:port, CIDRs, *) covers the server URL."""
    hostport = host.split("://", 1)[-1].split("/", 1)[0]
    if hostport.startswith("["):
        name, port = hostport[1:].partition("]")[::2]
        port = port.lstrip(":")
    else:
        name, port = hostport.partition(":")[::2]
    name = name.lower()
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        if "/" in entry:
            if _in_network(name, entry):
                return True
            continue
        entry_name, entry_port = entry.rpartition(":")[::2] if entry.count(":") == 1 else (entry, "")
        if entry_port and entry_port != port:
            continue
        entry_name = entry_name.strip("[]").lstrip(".")
        if name == entry_name or name.endswith("." + entry_name):
            return True
    return False


def _in_network(name, cidr):
    import ipaddress
    try:
        return ipaddress.ip_address(name) in ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False


# -- exec credential plugins --------------------------------------------------------------------------------

class ExecCredential:
    """What an exec plugin returned: a token or a client certificate and key (PEM), and when it expires."""

    def __init__(self, token=None, cert_data=None, key_data=None, expires=None):
        self.token = token
        self.cert_data = cert_data
        self.key_data = key_data
        self.expires = expires        # seconds since the epoch, or None

    def expired(self, now, margin=10.0):
        return self.expires is not None and now + margin >= self.expires


class ExecPlugin:
    """A user's `exec` section (client.authentication.k8s.io v1 or v1beta1)."""

    def __init__(self, config, user, where, cluster_info=None):
        self.what = "%s: exec plugin of user %s" % (where, user)
        if not isinstance(config, dict):
            raise InputError(["%s must be a mapping" % self.what])
        self.api_version = config.get("apiVersion")
        if self.api_version not in EXEC_API_VERSIONS:
            raise InputError(["%s: apiVersion %s is not supported (%s)"
                              % (self.what, self.api_version or "(none)", " or ".join(EXEC_API_VERSIONS))])
        self.command = config.get("command")
        if not self.command or not isinstance(self.command, str):
            raise InputError(["%s has no command" % self.what])
        self.args = config.get("args") or []
        env = config.get("env") or []
        if not isinstance(self.args, list) or not isinstance(env, list) or not all(
                isinstance(item, dict) and item.get("name") for item in env):
            raise InputError(["%s: args must be a list and env a list of {name, value}" % self.what])
        self.env = [(str(item["name"]), str(item.get("value") or "")) for item in env]
        if config.get("interactiveMode") == "Always":
            raise InputError(["%s needs a terminal (interactiveMode: Always), which a module does not have"
                              % self.what])
        self.install_hint = config.get("installHint")
        self.cluster_info = cluster_info if config.get("provideClusterInfo") else None

    def exec_info(self):
        spec = {"interactive": False}
        if self.cluster_info is not None:
            spec["cluster"] = self.cluster_info
        return {"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec}

    def run(self, environ=None, timeout=EXEC_TIMEOUT):
        """Run the plugin once; its stdout is a credential, so no message quotes it."""
        env = dict(os.environ if environ is None else environ)
        env.update(self.env)
        env["KUBERNETES_EXEC_INFO"] = json.dumps(self.exec_info())
        argv = [self.command] + [str(arg) for arg in self.args]
        try:
            proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=timeout, check=False)
        except OSError as exc:
            hint = " (%s)" % self.install_hint.strip() if self.install_hint else ""
            raise InputError(["%s: cannot run %s: %s%s" % (self.what, self.command, exc.strerror or exc, hint)])
        except subprocess.TimeoutExpired:
            raise InputError(["%s: %s did not finish within %ds" % (self.what, self.command, timeout)])
        if proc.returncode != 0:
            stderr = " ".join(proc.stderr.decode("utf-8", "replace").split())[-300:]
            raise InputError(["%s: %s failed with exit code %d%s"
                              % (self.what, self.command, proc.returncode, ": " + stderr if stderr else "")])
        return self.parse(proc.stdout)

    def parse(self, stdout):
        try:
            data = json.loads(stdout.decode("utf-8") if isinstance(stdout, bytes) else stdout)
        except (ValueError, UnicodeDecodeError):
            raise InputError(["%s: %s did not print an ExecCredential as JSON" % (self.what, self.command)])
        if not isinstance(data, dict) or data.get("kind") != "ExecCredential":
            raise InputError(["%s: %s printed no ExecCredential (kind %s)"
                              % (self.what, self.command, data.get("kind") if isinstance(data, dict) else "-")])
        if data.get("apiVersion") != self.api_version:
            raise InputError(["%s: %s answered with apiVersion %s, expected %s"
                              % (self.what, self.command, data.get("apiVersion"), self.api_version)])
        status = data.get("status")
        if not isinstance(status, dict):
            raise InputError(["%s: %s returned an ExecCredential without status" % (self.what, self.command)])
        token = status.get("token") or None
        cert, key = status.get("clientCertificateData") or None, status.get("clientKeyData") or None
        if bool(cert) != bool(key):
            raise InputError(["%s: %s returned %s without %s" % (
                self.what, self.command, "clientCertificateData" if cert else "clientKeyData",
                "clientKeyData" if cert else "clientCertificateData")])
        if not token and not cert:
            raise InputError(["%s: %s returned neither a token nor a client certificate and key"
                              % (self.what, self.command)])
        expires = status.get("expirationTimestamp")
        if expires:
            parsed = parse_timestamp(expires)
            if parsed is None:
                raise InputError(["%s: %s returned expirationTimestamp %r, not RFC 3339"
                                  % (self.what, self.command, expires)])
            expires = parsed
        return ExecCredential(token, cert, key, expires or None)
