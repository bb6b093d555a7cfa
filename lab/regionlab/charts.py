"""The lab's Helm chart repository: real upstream charts where they can be had, lab-made ones where not.

Phase 3 of the region installs its operators with Flux HelmReleases; in the lab, Flux pulls the
charts from http://127.0.0.1:<config.CHARTS_PORT>/ (index.yaml + <name>-<version>.tgz), which
this module builds and serves.

- Real charts (lab/charts/real.json): the chart folder of a pinned Go module (`go mod download
  -json module@version`, its h1 sum checked), packaged as the project's own release packages it
  (RELEASES below: the version set to the tag, generated files made, dependencies vendored).
- Lab-made charts (lab/charts/<name>/, lab/charts/made.yaml): only where no real chart can be had.
  Chart.yaml and values.yaml of their own, the templates shared (lab/charts/_shared/templates), and
  crds/ copied at build time from the lab's CRD files (hand-written lab/crds/<group>.yaml, or the
  pinned upstream CRDs of lab/crds/upstream.json). Each is built in two versions (its own and the
  next patch version) so that a chart upgrade can be tested.
- Packages are what `helm package` makes (a gzip tar whose top folder is the chart name; Chart.yaml
  and Chart.lock as Helm re-serialises them; file:// dependencies vendored under charts/), but
  reproducible: fixed modification times, sorted members, fixed gzip header. The same inputs give
  the same bytes, hence the same digests in index.yaml, and a stamp over the inputs skips the
  rebuild when nothing changed.
- The values the lab passes to the real charts (no webhooks, no hook Jobs, CRDs from the chart)
  are in the lab inventory's operator overrides, inventories/lab/group_vars/all/operators.yml
  (`lab_values()`).
"""

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import requests
import yaml

from . import config, processes

REPOSITORY = config.STATE / "charts"
STAMP = config.STATE / "charts.stamp"
SOURCES = config.CHARTS
REAL = SOURCES / "real.json"
MADE = SOURCES / "made.yaml"
# The lab inventory's operator overrides: the values the lab passes to the real charts.
LAB_VALUES = config.INVENTORY / "group_vars" / "all" / "operators.yml"
SHARED_TEMPLATES = SOURCES / "_shared" / "templates"
PROCESS = "chart-repository"
URL = "http://127.0.0.1:%d/" % config.CHARTS_PORT

# Modification time of every member and `created` of the lab-made charts (real charts: the time of
# their module version): fixed, so that a rebuild gives the same bytes.
EPOCH = datetime(2025, 1, 1, tzinfo=timezone.utc)
# The annotation that marks a lab-made chart (Chart.yaml, and so index.yaml).
MADE_ANNOTATION = "lab.c5c3.io/made"

# Chart.yaml fields Helm knows (chart.Metadata); `helm package` drops any other.
METADATA_FIELDS = ("name", "home", "sources", "version", "description", "keywords", "maintainers", "icon",
                   "apiVersion", "condition", "tags", "appVersion", "deprecated", "annotations", "kubeVersion",
                   "dependencies", "type")
DEPENDENCY_FIELDS = ("name", "version", "repository", "condition", "tags", "enabled", "import-values", "alias")


# YAML ------------------------------------------------------------------------

class _Loader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
    """SafeLoader without timestamps: Chart.lock's `generated` stays the string Helm wrote."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def _load(data):
    return yaml.load(data, Loader=_Loader)  # noqa: S506 (a SafeLoader)


def _dump(data):
    """YAML as Helm writes it through sigs.k8s.io/yaml: keys sorted, block style, lines folded at 80."""
    return yaml.safe_dump(data, sort_keys=True, default_flow_style=False, allow_unicode=True).encode()


def _time(value):
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# .helmignore (helm.sh/helm/v3 pkg/ignore) ----------------------------------------

def _go_match(pattern, name):
    """Go's filepath.Match: '*' and '?' never match '/'; classes [..] with ^ or ! negation."""
    regex, i = "", 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            regex += "[^/]*"
        elif char == "?":
            regex += "[^/]"
        elif char == "\\" and i + 1 < len(pattern):
            i += 1
            regex += re.escape(pattern[i])
        elif char == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                raise ValueError("bad pattern %r" % pattern)
            body = pattern[i + 1:end]
            if body[:1] in ("^", "!"):
                body = "^" + body[1:]
            regex += "[" + body.replace("\\", "\\\\") + "]"
            i = end
        else:
            regex += re.escape(char)
        i += 1
    return re.fullmatch(regex, name) is not None


class HelmIgnore:
    """The rules of a .helmignore plus Helm's default (templates/.?*), applied as LoadDir does."""

    def __init__(self, text=""):
        self.rules = []
        for line in (text.splitlines() + ["templates/.?*"]):
            rule = line.strip()
            if not rule or rule.startswith("#"):
                continue
            if "**" in rule:
                raise ValueError(".helmignore: ** is not supported: %r" % rule)
            negate = rule.startswith("!")
            if negate:
                # Helm's negation ignores whatever does NOT match; no chart here uses it.
                raise ValueError(".helmignore: negation is not supported here: %r" % rule)
            must_dir = rule.endswith("/")
            rule = rule.rstrip("/")
            if rule.startswith("/"):
                kind, rule = "root", rule[1:]
            else:
                kind = "path" if "/" in rule else "base"
            self.rules.append((kind, rule, must_dir))

    def ignored(self, path, is_dir):
        for kind, rule, must_dir in self.rules:
            if must_dir and not is_dir:
                continue
            name = path.rsplit("/", 1)[-1] if kind == "base" else path
            if _go_match(rule, name):
                return True
        return False


# Charts ------------------------------------------------------------------------

class Chart:
    """A chart in memory: its metadata (Chart.yaml), its other files, its vendored dependencies."""

    def __init__(self, metadata, files=None, dependencies=None, lock=None):
        self.metadata = dict(metadata)
        self.files = dict(files or {})  # path inside the chart folder -> bytes (no Chart.yaml/Chart.lock)
        self.dependencies = list(dependencies or [])
        self.lock = lock  # Chart.lock as loaded, or None

    @property
    def name(self):
        return self.metadata["name"]

    @property
    def version(self):
        return str(self.metadata["version"])

    def members(self, prefix=""):
        """(path in the archive, bytes): Chart.yaml first, then the rest sorted, then the dependencies."""
        base = prefix + self.name + "/"
        out = [(base + "Chart.yaml", _dump(normalised_metadata(self.metadata)))]
        files = dict(self.files)
        if self.lock is not None and self.metadata.get("apiVersion") == "v2":
            files["Chart.lock"] = _dump(self.lock)
        out += [(base + path, data) for path, data in sorted(files.items())]
        for dep in sorted(self.dependencies, key=lambda d: d.name):
            out += dep.members(base + "charts/")
        return out


def normalised_metadata(metadata):
    """Chart.yaml as `helm package` writes it: only Helm's fields, empty ones left out, strings kept strings."""
    out = {}
    for key in METADATA_FIELDS:
        value = metadata.get(key)
        if value in (None, "", [], {}, False):
            continue
        if key in ("version", "appVersion", "kubeVersion"):
            value = str(value)
        if key == "annotations":
            value = {str(k): str(v) for k, v in value.items()}
        if key == "dependencies":
            value = [{f: d[f] for f in DEPENDENCY_FIELDS if d.get(f) not in (None, "", [], False)} for d in value]
        out[key] = value
    return out


def load_dir(root):
    """A chart folder as Helm's LoadDir reads it (.helmignore applied); dependencies are not resolved."""
    root = Path(root)
    ignore_file = root / ".helmignore"
    rules = HelmIgnore(ignore_file.read_text() if ignore_file.exists() else "")
    files = {}
    for current, dirs, names in os.walk(root, followlinks=True):
        rel = Path(current).relative_to(root).as_posix()
        rel = "" if rel == "." else rel + "/"
        dirs[:] = sorted(d for d in dirs if not rules.ignored(rel + d, True))
        for name in sorted(names):
            if not rules.ignored(rel + name, False):
                files[rel + name] = (Path(current) / name).read_bytes()
    metadata = _load(files.pop("Chart.yaml"))
    lock = files.pop("Chart.lock", None)
    if any(path.startswith("charts/") for path in files):
        raise RuntimeError("%s: vendored charts/ in a chart source are not expected" % root)
    return Chart(metadata, files, lock=_load(lock) if lock is not None else None)


def _go_json(value):
    """encoding/json.Marshal: compact, UTF-8, <, > and & escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode()


def lock_digest(requested, locked):
    """Helm's resolver.HashReq: the digest Chart.lock records for Chart.yaml's dependencies and the lock's."""
    def fields(deps):
        if deps is None:
            return None
        return [{f: d[f] for f in DEPENDENCY_FIELDS if f in ("name", "repository") or d.get(f) not in (None, "", [], False)}
                for d in deps]
    return "sha256:" + hashlib.sha256(_go_json([fields(requested), fields(locked)])).hexdigest()


def vendor_dependencies(chart, source_dir):
    """Put every file:// dependency under charts/ (as `helm dependency build` or a copy of a symlinked
    folder does) and keep Chart.lock only when Helm would accept it; other repositories fail."""
    for dep in chart.metadata.get("dependencies") or []:
        repository = dep.get("repository") or ""
        if not repository.startswith("file://"):
            raise RuntimeError("%s: dependency %s comes from %s, which the lab cannot vendor"
                               % (chart.name, dep["name"], repository))
        sub = load_dir((Path(source_dir) / repository[len("file://"):]).resolve())
        if sub.name != dep["name"] or (dep.get("version") and str(dep["version"]) != sub.version):
            raise RuntimeError("%s: dependency %s %s is %s %s in %s"
                               % (chart.name, dep["name"], dep.get("version"), sub.name, sub.version, repository))
        chart.dependencies.append(sub)
    if chart.lock is not None:
        locked = chart.lock.get("dependencies") or []
        matches = (chart.lock.get("digest") == lock_digest(chart.metadata.get("dependencies") or [], locked)
                   and sorted((d["name"], str(d.get("version"))) for d in locked)
                   == sorted((d.name, d.version) for d in chart.dependencies))
        if not matches:
            chart.lock = None


def package(chart, mtime=EPOCH):
    """The .tgz bytes of a chart: gzip tar, top folder the chart name, files only, all 0644, fixed times."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, data in chart.members():
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, int(mtime.timestamp())
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


# Sources -------------------------------------------------------------------------

def real_entries():
    return json.loads(REAL.read_text())


def made_entries():
    return yaml.safe_load(MADE.read_text())


def lab_values():
    """release name -> the values the lab passes to its HelmRelease (the lab inventory's overrides)."""
    overrides = (yaml.safe_load(LAB_VALUES.read_text()) or {}).get("cobaltcore_operator_overrides") or {}
    return dict((name, entry.get("values") or {}) for name, entry in overrides.items())


def module(path, version):
    """`go mod download -json path@version` (outside any go.mod): Dir, Sum, Info, ..."""
    with tempfile.TemporaryDirectory() as scratch:
        out = subprocess.run(["go", "mod", "download", "-json", "%s@%s" % (path, version)], cwd=scratch,
                             capture_output=True, text=True, check=False)
    try:
        info = json.loads(out.stdout)
    except ValueError:
        info = {}
    if out.returncode != 0 or not info.get("Dir"):
        raise RuntimeError("%s@%s: %s" % (path, version, info.get("Error") or out.stderr.strip()))
    return info


def _module_time(info):
    try:
        stamp = json.loads(Path(info["Info"]).read_text())["Time"]
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except (KeyError, OSError, ValueError):
        return EPOCH


# Release steps of the real charts: what each project's release does to the chart folder before
# `helm package`. Each gets the loaded chart, its real.json entry and the module's folder.

def _set_version(chart, version, app_version=None):
    chart.metadata["version"] = version
    chart.metadata["appVersion"] = app_version or version


def _rook_release(chart, entry, _root):
    # build/makelib/helm.mk: `cp -aL` (the charts/library symlink, absent from the module zip,
    # becomes a folder: vendored from file://../library), `sed 's|master|<tag>|g' values.yaml`,
    # `helm package --version <tag> --app-version <tag>`; Chart.yaml says 0.0.1 in git.
    tag = entry["version"]
    chart.files["values.yaml"] = chart.files["values.yaml"].replace(b"master", tag.encode())
    _set_version(chart, tag)


def _cert_manager_release(chart, entry, root):
    # make/manifests.mk: copies only these files of deploy/charts/cert-manager, README.md from
    # README.template.md with {{RELEASE_VERSION}} replaced, and yq sets annotations
    # artifacthub.io/signKey (signkey_annotation.txt) and artifacthub.io/prerelease, version and
    # appVersion to the tag (Chart.yaml says v0.0.0 in git); then `helm package`.
    tag = entry["version"]
    source = Path(root) / entry["path"]
    keep = {"values.yaml", "values.schema.json", ".helmignore", "templates/NOTES.txt", "templates/_helpers.tpl"}
    chart.files = {path: data for path, data in chart.files.items()
                   if path in keep or (path.startswith("templates/") and path.endswith(".yaml")
                                       and "/" not in path[len("templates/"):])}
    chart.files["README.md"] = (source / "README.template.md").read_bytes().replace(b"{{RELEASE_VERSION}}", tag.encode())
    annotations = dict(chart.metadata.get("annotations") or {})
    annotations["artifacthub.io/signKey"] = (source / "signkey_annotation.txt").read_text()
    annotations["artifacthub.io/prerelease"] = "true" if "-" in tag else "false"
    chart.metadata["annotations"] = annotations
    _set_version(chart, tag)


ESO_ANNOTATIONS = (
    '    {{- with .Values.crds.annotations }}\n'
    '    {{- toYaml . | nindent 4}}\n'
    '    {{- end }}\n'
    '    {{- if and .Values.crds.conversion.enabled .Values.webhook.certManager.enabled'
    ' .Values.webhook.certManager.addInjectorAnnotations }}\n'
    '    cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "external-secrets.fullname" . }}-webhook\n'
    '    {{- end }}\n')


def eso_crd_templates(bundle_text):
    """hack/helm.generate.sh of external-secrets: deploy/crds/bundle.yaml split into
    templates/crds/<singular>.yaml, each wrapped in its installCRDs / crds.create<Kind> condition,
    the conversion webhook's service named after the release, the crds.annotations block added."""
    out = {}
    for text in re.split(r"^---\s*$\n?", bundle_text, flags=re.M):
        doc = yaml.safe_load(text)
        if not doc:
            continue
        names = doc["spec"]["names"]
        kind = names["kind"]
        if kind in ("ExternalSecret", "SecretStore", "ClusterExternalSecret", "ClusterSecretStore") and any(
                v["name"] == "v1alpha1" for v in doc["spec"]["versions"]):
            # The script wraps the v1alpha1 version in crds.conversion.enabled; 0.16 has none.
            raise RuntimeError("external-secrets: %s has a v1alpha1 version; the generator is not reproduced for it" % kind)
        flag = "create" + kind
        if "Cluster" in flag or "PushSecret" in flag:
            head = "{{- if and (.Values.installCRDs) (.Values.crds.%s) }}\n" % flag
        else:
            head = "{{- if .Values.installCRDs }}\n"
        body = text if text.endswith("\n") else text + "\n"
        body = body.replace("name: kubernetes", 'name: {{ include "external-secrets.fullname" . }}-webhook')
        body = body.replace("namespace: default", "namespace: {{ .Release.Namespace | quote }}")
        lines = body.splitlines(keepends=True)
        first = next(i for i, line in enumerate(lines) if "annotations" in line)
        lines.insert(first + 1, ESO_ANNOTATIONS)
        out["templates/crds/%s.yaml" % names["singular"]] = (head + "".join(lines) + "{{- end }}\n").encode()
    return out


def _external_secrets_release(chart, entry, root):
    # Makefile helm.build = hack/helm.generate.sh (CRD templates from deploy/crds/bundle.yaml) and
    # `helm package --dependency-update`; the chart release (chart-releaser, after the version bump
    # PR: docs/contributing/release.md) names it <tag without v> with appVersion <tag>; git at the
    # tag still says 0.16.1. Its one dependency, bitwarden-sdk-server (oci://ghcr.io, off unless
    # bitwarden-sdk-server.enabled), cannot be fetched here: it is dropped, and Chart.lock with it.
    tag = entry["version"]
    bundle = (Path(root) / "deploy" / "crds" / "bundle.yaml").read_text()
    chart.files.update(eso_crd_templates(bundle))
    chart.metadata["dependencies"] = [d for d in chart.metadata.get("dependencies") or []
                                      if d["name"] != "bitwarden-sdk-server"]
    _set_version(chart, tag.lstrip("v"), tag)


def _crossplane_release(chart, entry, _root):
    # Earthfile helm-build: `helm package --version <tag without v> --app-version <same>`
    # (Chart.yaml says 0.0.1 in git).
    _set_version(chart, entry["version"].lstrip("v"))


def _as_released(chart, entry, _root):
    # mariadb-operator: chart-releaser packages deploy/charts/* as they are in git (`helm
    # dependency build` vendors file://../mariadb-operator-crds); Chart.yaml carries the version.
    if chart.version != entry["chart_version"]:
        raise RuntimeError("%s: Chart.yaml says %s, real.json %s" % (chart.name, chart.version, entry["chart_version"]))


RELEASES = {
    "rook": _rook_release,
    "cert-manager": _cert_manager_release,
    "external-secrets": _external_secrets_release,
    "crossplane": _crossplane_release,
    "as-released": _as_released,
}


def real_chart(entry, info=None):
    """A real chart, packaged as its project releases it. Returns (chart, created)."""
    info = info or module(entry["module"], entry["version"])
    if info.get("Sum") != entry["sum"]:
        raise RuntimeError("%s@%s: sum %s, pinned %s" % (entry["module"], entry["version"], info.get("Sum"), entry["sum"]))
    source = Path(info["Dir"]) / entry["path"]
    chart = load_dir(source)
    if chart.name != entry["name"]:
        raise RuntimeError("%s: %s holds chart %s" % (entry["name"], source, chart.name))
    RELEASES[entry["release"]](chart, entry, info["Dir"])
    vendor_dependencies(chart, source)
    if chart.version != entry["chart_version"]:
        raise RuntimeError("%s: packaged as %s, real.json says %s" % (entry["name"], chart.version, entry["chart_version"]))
    return chart, _module_time(info)


def _crd_documents(text):
    """(parsed, text) of each document of a multi-document YAML file, comments kept with their document."""
    out = []
    for chunk in re.split(r"^---[^\n]*\n", text, flags=re.M):
        doc = yaml.safe_load(chunk)
        if doc:
            out.append((doc, chunk.strip("\n") + "\n"))
    return out


def _gk(doc):
    return "%s/%s" % (doc["spec"]["group"], doc["spec"]["names"]["kind"])


def made_crds(name, spec, module_of=None):
    """crds/<file> of a lab-made chart: the CRD documents its made.yaml entry selects."""
    module_of = module_of or (lambda path, version: module(path, version)["Dir"])
    upstream = {e["name"]: e for e in json.loads((config.CRDS / "upstream.json").read_text())}
    files = {}
    for source in spec.get("crds") or []:
        if "file" in source:
            docs = _crd_documents((config.CRDS / source["file"]).read_text())
            wanted = source.get("kinds")
            chosen = [(doc, text) for doc, text in docs if wanted is None or doc["spec"]["names"]["kind"] in wanted]
            found = {doc["spec"]["names"]["kind"] for doc, _ in chosen}
            if wanted is not None and found != set(wanted):
                raise RuntimeError("%s: %s lacks %s" % (name, source["file"], sorted(set(wanted) - found)))
        else:
            entry = upstream[source["upstream"]]
            root = Path(module_of(entry["module"], entry["version"]))
            chosen = []
            for pattern in entry["files"]:
                for path in sorted(root.glob(pattern)):
                    chosen += [(doc, text) for doc, text in _crd_documents(path.read_text())
                               if doc.get("kind") == "CustomResourceDefinition" and _gk(doc) in entry["kinds"]]
            found = {_gk(doc) for doc, _ in chosen}
            if found != set(entry["kinds"]) or len(chosen) != len(found):
                raise RuntimeError("%s: upstream %s gives %s, wants %s" % (name, entry["name"], sorted(found), entry["kinds"]))
        for doc, text in chosen:
            files["crds/%s.yaml" % doc["metadata"]["name"]] = text.encode()
    return files


def next_patch(version):
    major, minor, patch = str(version).split(".")
    return "%s.%s.%d" % (major, minor, int(patch) + 1)


def made_charts(name, spec, module_of=None):
    """A lab-made chart in its own version and in the next patch version (same content otherwise)."""
    folder = SOURCES / name
    chart = load_dir(folder)
    if chart.name != name:
        raise RuntimeError("lab/charts/%s: Chart.yaml names %s" % (name, chart.name))
    for path in sorted(SHARED_TEMPLATES.iterdir()):
        chart.files.setdefault("templates/" + path.name, path.read_bytes())
    chart.files.update(made_crds(name, spec, module_of))
    out = []
    for version in (chart.version, next_patch(chart.version)):
        copy = Chart(chart.metadata, chart.files)
        _set_version(copy, version)
        out.append(copy)
    return out


# The repository ----------------------------------------------------------------------

def index_entry(chart, filename, digest, created):
    entry = normalised_metadata(chart.metadata)
    entry.update({"urls": [filename], "digest": digest, "created": _time(created)})
    return entry


def _version_key(version):
    match = re.match(r"v?(\d+)\.(\d+)\.(\d+)(.*)", version)
    numbers = tuple(int(n) for n in match.groups()[:3]) if match else (0, 0, 0)
    # A release sorts above its pre-releases, as semver orders them.
    return numbers + ((1, "") if not (match and match.group(4)) else (0, match.group(4)))


def write_repository(charts, directory):
    """Write <name>-<version>.tgz for each (chart, created) and index.yaml; returns the index."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    entries = {}
    for chart, created in charts:
        data = package(chart)
        filename = "%s-%s.tgz" % (chart.name, chart.version)
        (directory / filename).write_bytes(data)
        entries.setdefault(chart.name, []).append(
            index_entry(chart, filename, hashlib.sha256(data).hexdigest(), created))
    for versions in entries.values():
        versions.sort(key=lambda e: _version_key(e["version"]), reverse=True)
    index = {"apiVersion": "v1", "entries": dict(sorted(entries.items())), "generated": _time(EPOCH)}
    (directory / "index.yaml").write_bytes(_dump(index))
    return index


def all_charts(module_info=None, module_of=None):
    """Every chart the repository serves: [(Chart, created)]."""
    module_info = module_info or module
    out = []
    for entry in real_entries():
        out.append(real_chart(entry, module_info(entry["module"], entry["version"])))
    for name, spec in sorted(made_entries().items()):
        out += [(chart, EPOCH) for chart in made_charts(name, spec, module_of)]
    return out


def _stamp():
    """Digest of every input: this file, lab/charts/**, lab/crds/* (module contents are pinned by their sums)."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for root in (SOURCES, config.CRDS):
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            digest.update(str(path.relative_to(config.REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def up_to_date():
    return STAMP.exists() and STAMP.read_text() == _stamp() and (REPOSITORY / "index.yaml").exists()


def build(log=print):
    """Assemble STATE/charts unless its inputs are unchanged. Returns True when it was rebuilt."""
    if up_to_date():
        return False
    stamp = _stamp()
    fresh = config.STATE / "charts.new"
    shutil.rmtree(fresh, ignore_errors=True)
    index = write_repository(all_charts(), fresh)
    old = config.STATE / "charts.old"
    shutil.rmtree(old, ignore_errors=True)
    if REPOSITORY.exists():
        REPOSITORY.rename(old)
    fresh.rename(REPOSITORY)
    shutil.rmtree(old, ignore_errors=True)
    STAMP.write_text(stamp)
    log("chart repository: %d charts, %d packages in %s"
        % (len(index["entries"]), sum(len(v) for v in index["entries"].values()), REPOSITORY))
    return True


# Serving ---------------------------------------------------------------------------

def _argv():
    return [sys.executable, "-m", "http.server", str(config.CHARTS_PORT), "--bind", "127.0.0.1",
            "--directory", str(REPOSITORY)]


def start():
    """Serve STATE/charts on loopback (idempotent)."""
    if not processes.pid_of(PROCESS):
        REPOSITORY.mkdir(parents=True, exist_ok=True)
        processes.start(PROCESS, _argv(), marker=str(REPOSITORY))


def ready():
    """The server answers with the index.yaml on disk."""
    try:
        session = requests.Session()
        session.trust_env = False
        answer = session.get(URL + "index.yaml", timeout=2)
        return answer.ok and answer.content == (REPOSITORY / "index.yaml").read_bytes()
    except (requests.RequestException, OSError):
        return False


def up(log=print):
    build(log)
    start()
    processes.wait_until(ready, 30, "chart repository %s" % URL, PROCESS)
