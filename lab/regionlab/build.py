"""Build the lab's upstream binaries from Go modules, only when their pins change.

lab/go/kube builds kube-apiserver, kube-controller-manager, kubectl and etcd
from k8s.io/kubernetes and go.etcd.io/etcd/server/v3; lab/go/korc builds the
K-ORC manager in a module of its own, lab/go/flux-source and lab/go/flux-helm
the Flux source-controller and helm-controller (one module each: their
dependency pins differ). A stamp next to the binaries records the
hash of each module's go.mod and go.sum and the build flags.
"""

import hashlib
import json
import os
import subprocess
import time

from . import config

KUBE_PACKAGES = {
    "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
    "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
    "kubectl": "k8s.io/kubernetes/cmd/kubectl",
    "etcd": "go.etcd.io/etcd/server/v3",
}
KORC_PACKAGES = {"korc-manager": "github.com/k-orc/openstack-resource-controller/v2/cmd/manager"}
FLUX_SOURCE_PACKAGES = {"source-controller": "github.com/fluxcd/source-controller"}
FLUX_HELM_PACKAGES = {"helm-controller": "github.com/fluxcd/helm-controller"}


def _version_ldflags():
    version = config.KUBERNETES_VERSION
    major, minor = version.lstrip("v").split(".")[:2]
    flags = []
    for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += ["-X", "%s.gitVersion=%s" % (pkg, version), "-X", "%s.gitMajor=%s" % (pkg, major),
                  "-X", "%s.gitMinor=%s" % (pkg, minor), "-X", "%s.gitTreeState=clean" % pkg]
    return flags


MODULES = {
    "kube": (KUBE_PACKAGES, _version_ldflags),
    "korc": (KORC_PACKAGES, lambda: []),
    "flux-source": (FLUX_SOURCE_PACKAGES, lambda: []),
    "flux-helm": (FLUX_HELM_PACKAGES, lambda: []),
}


def _stamp(module):
    directory = config.GO_MODULES / module
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        digest.update((directory / name).read_bytes())
    packages, ldflags = MODULES[module]
    digest.update(json.dumps([packages, ldflags()]).encode())
    return digest.hexdigest()


def _stamp_file(module):
    return config.BIN / (".stamp-%s" % module)


def up_to_date(module):
    packages, _ = MODULES[module]
    stamp = _stamp_file(module)
    return (stamp.exists() and stamp.read_text() == _stamp(module)
            and all((config.BIN / name).exists() for name in packages))


def build(module, log=print):
    """Build one Go module's binaries unless they are current. Returns seconds spent."""
    if up_to_date(module):
        return 0.0
    packages, ldflags = MODULES[module]
    config.BIN.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-buildvcs=false")
    for name, package in packages.items():
        log("building %s from %s" % (name, package))
        subprocess.run(
            ["go", "build", "-trimpath", "-ldflags", " ".join(["-s", "-w"] + ldflags()),
             "-o", str(config.BIN / name), package],
            cwd=config.GO_MODULES / module, env=env, check=True)
    _stamp_file(module).write_text(_stamp(module))
    return time.monotonic() - started


def build_all(log=print):
    return {module: round(build(module, log), 1) for module in MODULES}


def module_dir(module_dir_of, version):
    """The extracted directory of a Go module in the module cache (downloads it if needed)."""
    out = subprocess.run(["go", "mod", "download", "-json", "%s@%s" % (module_dir_of, version)],
                         cwd=config.GO_MODULES / "korc", check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["Dir"]
