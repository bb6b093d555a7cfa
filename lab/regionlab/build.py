"""Build the lab's upstream binaries from Go modules, only when their pins change.

lab/go/kube builds kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and
etcd from k8s.io/kubernetes and go.etcd.io/etcd/server/v3; lab/go/kwok builds KWOK, which plays
the kubelets of the lab's Nodes; lab/go/korc builds the
K-ORC manager in a module of its own, lab/go/flux-source and lab/go/flux-helm
the Flux source-controller and helm-controller (one module each: their
dependency pins differ), lab/go/metal IronCore's metal-operator and the lab's Redfish BMCs built on
its mock. A stamp next to the binaries records the
hash of each module's go.mod and go.sum, the build flags and source patches.
"""

import hashlib
import json
import os
import shutil
import subprocess
import time

from . import config

KUBE_PACKAGES = {
    "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
    "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
    "kube-scheduler": "k8s.io/kubernetes/cmd/kube-scheduler",
    "kubectl": "k8s.io/kubernetes/cmd/kubectl",
    "etcd": "go.etcd.io/etcd/server/v3",
}
KWOK_PACKAGES = {"kwok": "sigs.k8s.io/kwok/cmd/kwok"}
KORC_PACKAGES = {"korc-manager": "github.com/k-orc/openstack-resource-controller/v2/cmd/manager"}
FLUX_SOURCE_PACKAGES = {"source-controller": "github.com/fluxcd/source-controller"}
FLUX_HELM_PACKAGES = {"helm-controller": "github.com/fluxcd/helm-controller"}
METAL_PACKAGES = {"metal-operator": "github.com/ironcore-dev/metal-operator/cmd", "lab-redfish": "./redfish"}


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
    "kwok": (KWOK_PACKAGES, lambda: []),
    "korc": (KORC_PACKAGES, lambda: []),
    "flux-source": (FLUX_SOURCE_PACKAGES, lambda: []),
    "flux-helm": (FLUX_HELM_PACKAGES, lambda: []),
    "metal": (METAL_PACKAGES, lambda: []),
}


# Source patches of dependencies: module -> [(Go module, file, old, new)].
# Flux's managers set no leader election namespace, so controller-runtime reads it from the
# pod's service-account mount and, outside a pod, fails: "unable to find leader election
# namespace: not running in-cluster". The path made relative is the same file in a pod (cwd /);
# in the lab it is under the controller's working directory, where flux.py writes it.
_LEADER_ELECTION_NAMESPACE = (
    "sigs.k8s.io/controller-runtime", "pkg/leaderelection/leader_election.go",
    'inClusterNamespacePath = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"',
    'inClusterNamespacePath = "var/run/secrets/kubernetes.io/serviceaccount/namespace"')
PATCHES = {"flux-source": [_LEADER_ELECTION_NAMESPACE], "flux-helm": [_LEADER_ELECTION_NAMESPACE]}


def _stamp(module):
    directory = config.GO_MODULES / module
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        digest.update((directory / name).read_bytes())
    packages, ldflags = MODULES[module]
    for package in sorted(packages.values()):
        if package.startswith("./"):  # the lab's own Go code in the module
            for source in sorted((directory / package).rglob("*.go")):
                digest.update(source.read_bytes())
    # Patches only where there are: other worktrees share config.BIN and the stamps of the rest.
    digest.update(json.dumps([packages, ldflags()] + ([PATCHES[module]] if module in PATCHES else [])).encode())
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
    flags = _patched(module, env)
    for name, package in packages.items():
        log("building %s from %s" % (name, package))
        subprocess.run(
            ["go", "build", "-trimpath", "-ldflags", " ".join(["-s", "-w"] + ldflags())] + flags
            + ["-o", str(config.BIN / name), package],
            cwd=config.GO_MODULES / module, env=env, check=True)
    _stamp_file(module).write_text(_stamp(module))
    return time.monotonic() - started


def _patched(module, env):
    """Flags that build with the module's PATCHES applied (none: no flags): a patched copy of each
    dependency, replaced in a copy of go.mod (-modfile). Not -overlay: go refuses to overlay files
    of the module cache."""
    if module not in PATCHES:
        return []
    directory = config.GO_MODULES / module
    # A fixed place, the same for every worktree sharing BIN: the copy's path is part of the
    # binary's build info, and an unchanged binary is then left as it is, not replaced under the
    # processes running it (processes.pid_of would no longer know them).
    work = config.BIN.resolve() / ".patched" / module
    shutil.rmtree(work, ignore_errors=True)
    replaces = []
    for dependency, path, old, new in PATCHES[module]:
        out = subprocess.run(["go", "mod", "download", "-json", dependency], cwd=directory,
                             env=env, check=True, capture_output=True, text=True)
        copy = work / dependency.replace("/", "_")
        shutil.copytree(json.loads(out.stdout)["Dir"], copy)
        for item in [copy, *copy.rglob("*")]:  # the module cache's files are read-only
            item.chmod(item.stat().st_mode | 0o200)
        target = copy / path
        text = target.read_text()
        if text.count(old) != 1:  # a new version moved the code: the patch needs a look
            raise RuntimeError("patch of %s/%s: %r not found once" % (dependency, path, old))
        target.write_text(text.replace(old, new))
        replaces.append("replace %s => %s\n" % (dependency, copy))
    (work / "go.mod").write_text((directory / "go.mod").read_text() + "".join(replaces))
    shutil.copy(directory / "go.sum", work / "go.sum")
    return ["-modfile", str(work / "go.mod")]


def required_version(lab_module, go_module):
    """The version of go_module that lab/go/<lab_module>/go.mod requires."""
    for line in (config.GO_MODULES / lab_module / "go.mod").read_text().splitlines():
        words = line.split()
        if words[:1] == ["require"] and words[1:2] == [go_module]:
            return words[2]
        if words[:1] == [go_module]:
            return words[1]
    raise RuntimeError("lab/go/%s/go.mod requires no %s" % (lab_module, go_module))


def build_all(log=print):
    return {module: round(build(module, log), 1) for module in MODULES}


def module_dir(module_dir_of, version, lab_module="korc"):
    """The extracted directory of a Go module in the module cache (downloads it if needed)."""
    out = subprocess.run(["go", "mod", "download", "-json", "%s@%s" % (module_dir_of, version)],
                         cwd=config.GO_MODULES / lab_module, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["Dir"]
