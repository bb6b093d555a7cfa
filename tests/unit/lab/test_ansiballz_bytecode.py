# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The venv's bytecode cache for sources imported from zips and by the collection loader
(lab/ansiballz_bytecode.py): a source text is compiled once, a later zip or file with the same text
gets the same code under its own file name, another text or a damaged entry is compiled, and
`make setup` installed it into the venv."""
from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import importlib.util
import os
import pathlib
import subprocess
import sys
import time
import traceback
import zipfile
import zipimport

import pytest
import yaml

from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "lab"))
import ansiballz_bytecode  # noqa: E402  pylint: disable=wrong-import-position

SOURCE = '''
class Step:
    def run(self):
        def inner():
            raise RuntimeError("from the zip")
        inner()


VALUE = %d
'''


@pytest.fixture
def compiles(tmp_path, monkeypatch):
    """The cache in tmp_path, enabled for zipimport; the list of sources compiled for real."""
    done = []
    real = ansiballz_bytecode._compile_source

    def counting(pathname, source):
        done.append(pathname)
        return real(pathname, source)
    monkeypatch.setattr(ansiballz_bytecode, "CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(ansiballz_bytecode, "_compile_source", counting)
    monkeypatch.setattr(zipimport, "_compile_source", ansiballz_bytecode.cached_compile)
    return done


def _import_from_zip(tmp_path, name, value=1):
    archive = tmp_path / ("%s.zip" % name)
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped_step.py", SOURCE % value)
    spec = zipimport.zipimporter(str(archive)).find_spec("zipped_step")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return archive, module


def _traceback_files(module):
    try:
        module.Step().run()
    except RuntimeError:
        return [frame.filename for frame in traceback.extract_tb(sys.exc_info()[2])[1:]]
    raise AssertionError("Step.run did not raise")


def test_the_same_source_in_another_zip_is_not_compiled_again_and_names_its_own_zip(tmp_path, compiles):
    first, module = _import_from_zip(tmp_path, "first")
    assert compiles == [str(first / "zipped_step.py")]
    assert len(os.listdir(tmp_path / "cache")) == 1
    second, module = _import_from_zip(tmp_path, "second")
    assert compiles == [str(first / "zipped_step.py")], "the second zip's identical source was compiled again"
    assert module.VALUE == 1
    expected = str(second / "zipped_step.py")
    # The nested functions' code objects too: a traceback names the zip that ran.
    assert _traceback_files(module) == [expected, expected]


def test_another_source_is_compiled(tmp_path, compiles):
    _import_from_zip(tmp_path, "first", value=1)
    module = _import_from_zip(tmp_path, "second", value=2)[1]
    assert module.VALUE == 2
    assert len(compiles) == 2
    assert len(os.listdir(tmp_path / "cache")) == 2


def test_a_damaged_entry_is_compiled_and_replaced(tmp_path, compiles):
    _import_from_zip(tmp_path, "first")
    entry = tmp_path / "cache" / os.listdir(tmp_path / "cache")[0]
    entry.write_bytes(b"\x00not marshal data")
    module = _import_from_zip(tmp_path, "second")[1]
    assert module.VALUE == 1 and len(compiles) == 2
    _import_from_zip(tmp_path, "third")
    assert len(compiles) == 2, "the replaced entry was not used"


def test_an_unwritable_cache_still_compiles(tmp_path, compiles):
    (tmp_path / "cache").write_text("a file where the directory should be")
    first, module = _import_from_zip(tmp_path, "first")
    # zipimport compiles a module twice on import (get_filename for the spec, then get_code).
    assert module.VALUE == 1 and compiles == [str(first / "zipped_step.py")] * 2


def test_install_writes_the_module_and_its_pth_and_prunes_old_entries(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    old, recent = cache / "old", cache / "recent"
    old.write_bytes(b"x")
    recent.write_bytes(b"x")
    stale = time.time() - (ansiballz_bytecode.KEEP_DAYS + 1) * 86400
    os.utime(old, (stale, stale))
    monkeypatch.setattr(ansiballz_bytecode, "CACHE", str(cache))
    purelib = tmp_path / "site-packages"
    purelib.mkdir()
    ansiballz_bytecode.install(str(purelib))
    module = purelib / ("%s.py" % ansiballz_bytecode.MODULE)
    assert module.read_bytes() == open(ansiballz_bytecode.__file__, "rb").read()
    assert os.path.isfile(importlib.util.cache_from_source(str(module)))
    assert (purelib / ("%s.pth" % ansiballz_bytecode.MODULE)).read_text() == (
        "import {0}; {0}.enable()\n".format(ansiballz_bytecode.MODULE))
    assert sorted(os.listdir(cache)) == ["recent"]


def test_make_setup_enabled_it_in_the_venv():
    if not sys.prefix.startswith(os.path.join(REPO, ".venv")) and os.path.realpath(sys.prefix) != os.path.realpath(
            os.path.join(REPO, ".venv")):
        pytest.fail("the unit tests run in the project's venv (make unit): %s" % sys.prefix)
    assert zipimport._compile_source.__module__ == ansiballz_bytecode.MODULE
    from ansible._internal._templating._jinja_bits import AnsibleEnvironment
    from ansible.config.manager import ConfigManager
    from ansible.executor.task_queue_manager import TaskQueueManager
    from ansible.plugins.action import ActionBase
    from ansible.utils.collection_loader import _collection_finder
    assert AnsibleEnvironment.compile.__module__ == ansiballz_bytecode.MODULE
    assert ActionBase._low_level_execute_command.__module__ == ansiballz_bytecode.MODULE
    assert TaskQueueManager.run.__module__ == ansiballz_bytecode.MODULE
    assert _collection_finder._meta_yml_to_dict.__module__ == ansiballz_bytecode.MODULE
    assert ConfigManager._read_config_yaml_file.__module__ == ansiballz_bytecode.MODULE


# Each part of the controller's hook: its off switch and the modules it patches (the task queue manager starts
# the preload and the module zygote, and freezes the collector's objects).
CONTROLLER_PARTS = {"COBALTCORE_JINJA_BYTECODE": {ansiballz_bytecode.JINJA_BITS},
                    "COBALTCORE_PRELOAD_JINJA_PLUGINS": {ansiballz_bytecode.TASK_QUEUE_MANAGER},
                    "COBALTCORE_RUNTIME_YAML": {ansiballz_bytecode.CONFIG_MANAGER},
                    ansiballz_bytecode.MODULE_ZYGOTE_SWITCH: {ansiballz_bytecode.TASK_QUEUE_MANAGER,
                                                              ansiballz_bytecode.ACTION_BASE},
                    ansiballz_bytecode.GC_FREEZE_SWITCH: {ansiballz_bytecode.TASK_QUEUE_MANAGER}}
CONTROLLER_MODULES = set().union(*CONTROLLER_PARTS.values())


@pytest.mark.parametrize("setting, enabled", [(None, True), ("1", True), ("0", False)])
def test_the_environment_can_turn_it_off(monkeypatch, setting, enabled):
    monkeypatch.setattr(zipimport, "_compile_source", zipimport._compile_source)
    monkeypatch.setattr(ansiballz_bytecode, "_compile_source", zipimport._compile_source)
    if setting is None:
        monkeypatch.delenv("COBALTCORE_ANSIBALLZ_BYTECODE", raising=False)
    else:
        monkeypatch.setenv("COBALTCORE_ANSIBALLZ_BYTECODE", setting)
    monkeypatch.delenv("COBALTCORE_ANSIBALLZ_ZIPS", raising=False)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    watched = [ansiballz_bytecode.COLLECTION_LOADER, ansiballz_bytecode.MODULE_COMMON] + sorted(CONTROLLER_MODULES)
    for name in watched:
        monkeypatch.delitem(sys.modules, name, raising=False)
    for part in CONTROLLER_PARTS:
        monkeypatch.delenv(part, raising=False)
    ansiballz_bytecode.enable()
    assert (zipimport._compile_source is ansiballz_bytecode.cached_compile) is enabled
    patches = sorted(f.name for f in sys.meta_path if isinstance(f, ansiballz_bytecode.ImportPatch))
    assert patches == (sorted(watched) if enabled else [])


@pytest.mark.parametrize("part", sorted(CONTROLLER_PARTS))
def test_each_controller_part_can_be_turned_off_alone(monkeypatch, part):
    monkeypatch.setattr(zipimport, "_compile_source", zipimport._compile_source)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.delenv("COBALTCORE_ANSIBALLZ_BYTECODE", raising=False)
    for other in CONTROLLER_PARTS:
        monkeypatch.delenv(other, raising=False)
    monkeypatch.setenv(part, "0")
    for name in CONTROLLER_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    ansiballz_bytecode.enable()
    patches = set(f.name for f in sys.meta_path if isinstance(f, ansiballz_bytecode.ImportPatch))
    still_on = set().union(*(modules for other, modules in CONTROLLER_PARTS.items() if other != part))
    assert patches & CONTROLLER_MODULES == still_on


def test_the_collection_loaders_compile_of_a_file_is_cached_and_any_other_compile_is_the_builtins(tmp_path, compiles):
    source = (SOURCE % 3).encode()
    first = ansiballz_bytecode.loader_compile(source=source, filename="/a/plugin.py", mode="exec", flags=0,
                                              dont_inherit=True)
    again = ansiballz_bytecode.loader_compile(source=source, filename="/b/plugin.py", mode="exec", flags=0,
                                              dont_inherit=True)
    assert compiles == ["/a/plugin.py"]
    assert (first.co_filename, again.co_filename) == ("/a/plugin.py", "/b/plugin.py")
    namespace = {}
    exec(again, namespace)  # pylint: disable=exec-used
    assert namespace["VALUE"] == 3
    # Not the loader's call (text, another mode, inherited flags): the builtin compiles, nothing is cached.
    assert ansiballz_bytecode.loader_compile("1 + 1", "<expr>", "eval").co_filename == "<expr>"
    ansiballz_bytecode.loader_compile(source, "/c/plugin.py", "exec")
    assert compiles == ["/a/plugin.py"] and len(os.listdir(tmp_path / "cache")) == 1


COLLECTION_IMPORT = """
import sys
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
import ansible.utils.collection_loader._collection_finder as finder_module
_AnsibleCollectionFinder(paths=[sys.argv[1]])._install()
from ansible_collections.lab.probe.plugins.module_utils import probe
print(getattr(finder_module, "compile", compile).__module__, probe.VALUE)
"""


@pytest.mark.parametrize("setting, compiler", [("1", ansiballz_bytecode.MODULE), ("0", "builtins")])
def test_a_fresh_interpreter_imports_collection_code_through_the_cache(tmp_path, setting, compiler):
    utils = tmp_path / "ansible_collections" / "lab" / "probe" / "plugins" / "module_utils"
    utils.mkdir(parents=True)
    (utils / "probe.py").write_text("VALUE = %r\n" % str(tmp_path))
    env = dict(os.environ, COBALTCORE_ANSIBALLZ_BYTECODE=setting)
    out = subprocess.run([sys.executable, "-c", COLLECTION_IMPORT, str(tmp_path)], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == [compiler, str(tmp_path)]


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_the_zips_directory_follows_every_source_a_zip_is_built_from(tmp_path):
    core_utils = tmp_path / "site" / "ansible" / "module_utils"
    _write(core_utils / "basic.py", "BASIC = 1\n")
    (tmp_path / "site" / "ansible-12.3.0.dist-info").mkdir()
    collection = tmp_path / "ansible_collections" / "ns" / "coll" / "plugins"
    module = _write(collection / "modules" / "thing.py", "from ..module_utils import util\n")
    other = _write(collection / "modules" / "other.py", "OTHER = 1\n")
    util = _write(collection / "module_utils" / "sub" / "util.py", "UTIL = 1\n")
    first = ansiballz_bytecode.zips_directory(module, str(core_utils))
    assert first == ansiballz_bytecode.zips_directory(module, str(core_utils))
    assert first.startswith(os.path.join(ansiballz_bytecode.ZIPS, ""))
    seen = {first}
    for path, text in ((util, "UTIL = 22\n"), (other, "OTHER = 22\n"), (module, "# edited\n"),
                       (str(core_utils / "basic.py"), "BASIC = 22\n")):
        _write(pathlib.Path(path), text)
        seen.add(ansiballz_bytecode.zips_directory(module, str(core_utils)))
    (tmp_path / "site" / "ansible-12.4.0.dist-info").mkdir()
    seen.add(ansiballz_bytecode.zips_directory(module, str(core_utils)))
    assert len(seen) == 6
    # A module outside a collection's plugins/modules: its own file counts.
    loose = _write(tmp_path / "library" / "loose.py", "A = 1\n")
    before = ansiballz_bytecode.zips_directory(loose, str(core_utils))
    _write(pathlib.Path(loose), "A = 22\n")
    assert ansiballz_bytecode.zips_directory(loose, str(core_utils)) != before


def test_a_modules_zip_is_built_once_for_every_run_until_its_sources_change(tmp_path):
    """Two ansible runs of the same module: the second uses the zip the first built in the venv."""
    def ping(**env):
        run_env = dict(os.environ, ANSIBLE_LOCAL_TEMP=str(tmp_path / "local"), **env)
        proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible"), "-i", "localhost,", "-c",
                               "local", "localhost", "-m", "ansible.builtin.ping", "-e",
                               "ansible_python_interpreter=%s" % sys.executable], env=run_env, capture_output=True,
                              text=True, check=False)
        assert proc.returncode == 0 and "pong" in proc.stdout, proc.stdout + proc.stderr
    from ansible.executor import module_common  # pylint: disable=import-outside-toplevel
    core = os.path.dirname(os.path.dirname(module_common.__file__))
    directory = ansiballz_bytecode.zips_directory(os.path.join(core, "modules", "ping.py"),
                                                  os.path.join(core, "module_utils"))
    zip_path = os.path.join(directory, "ansiballz_cache", "ansible.modules.ping-ZIP_DEFLATED-none")
    ping()
    built = os.stat(zip_path).st_mtime_ns
    ping()
    assert os.stat(zip_path).st_mtime_ns == built
    os.unlink(zip_path)
    ping(COBALTCORE_ANSIBALLZ_ZIPS="0")
    assert not os.path.exists(zip_path)


class _CompileContext:
    escape = None

    @classmethod
    def current(cls, optional=False):
        return cls() if cls.escape is not None else None

    @property
    def escape_backslashes(self):
        return self.escape


@pytest.fixture
def template_env(tmp_path, monkeypatch):
    """A Jinja environment class patched as the hook patches Ansible's, its cache in tmp_path, and the list
    of template texts compiled for real."""
    import jinja2
    compiled = []

    class Environment(jinja2.Environment):
        def compile(self, source, name=None, filename=None, raw=False, defer_init=False):
            compiled.append(source)
            return super().compile(source, name, filename, raw, defer_init)

    monkeypatch.setattr(ansiballz_bytecode, "TEMPLATES", str(tmp_path / "templates"))
    monkeypatch.setattr(ansiballz_bytecode, "_PLUGINS_DIGEST", ["plugins as they are"])
    monkeypatch.setattr(_CompileContext, "escape", None)
    jinja_bits = type("jinja_bits", (), {"AnsibleEnvironment": Environment, "_TemplateCompileContext": _CompileContext})
    ansiballz_bytecode.patch_jinja_bits(jinja_bits)
    Environment.compiled = compiled
    return Environment


TEMPLATE = "{% for item in items %}{{ item | upper }}{% if not loop.last %}, {% endif %}{% endfor %}"


def test_a_template_text_is_compiled_once_and_renders_alike(template_env, tmp_path):
    first = template_env().from_string(TEMPLATE).render(items=["a", "b"])
    assert first == "A, B" and template_env.compiled == [TEMPLATE]
    # Another environment (another worker): the code comes from the cache.
    assert template_env().from_string(TEMPLATE).render(items=["c"]) == "C"
    assert template_env.compiled == [TEMPLATE] and len(os.listdir(tmp_path / "templates")) == 1
    template_env().from_string("{{ other }}")
    assert template_env.compiled == [TEMPLATE, "{{ other }}"]


def test_what_shapes_the_generated_code_is_part_of_the_key(template_env, monkeypatch):
    template_env().from_string(TEMPLATE)
    # Other delimiters, another set of filter and test plugins, escaped backslashes: compiled anew.
    template_env(variable_start_string="[[", variable_end_string="]]").from_string(TEMPLATE)
    monkeypatch.setattr(ansiballz_bytecode, "_PLUGINS_DIGEST", ["a filter file changed"])
    template_env().from_string(TEMPLATE)
    monkeypatch.setattr(_CompileContext, "escape", True)
    template_env().from_string(TEMPLATE)
    assert template_env.compiled == [TEMPLATE] * 4
    env = template_env(variable_start_string="[[", variable_end_string="]]")
    assert env.from_string("[[ 1 + 1 ]]").render() == "2"


def test_what_is_not_cached_compiles_as_before(template_env, tmp_path):
    # autoescape by template name, Jinja's raw Python source, an already parsed template.
    env = template_env(autoescape=lambda name: True)
    assert env.from_string("{{ '<' }}").render() == "&lt;"
    assert env.from_string("{{ '<' }}").render() == "&lt;"
    plain = template_env()
    assert "def root" in plain.compile("{{ x }}", raw=True)
    plain.compile(plain.parse("{{ y }}"))
    assert len(template_env.compiled) == 4
    assert not (tmp_path / "templates").exists()


def test_a_template_that_fails_to_compile_fails_as_before_and_is_not_cached(template_env, tmp_path):
    import jinja2
    for _attempt in (1, 2):
        with pytest.raises(jinja2.TemplateSyntaxError, match="unexpected"):
            template_env().from_string("{{ 1 + }}")
    assert len(template_env.compiled) == 2 and not (tmp_path / "templates").exists()


def test_a_damaged_template_entry_is_compiled_and_replaced(template_env, tmp_path):
    template_env().from_string(TEMPLATE)
    entry = tmp_path / "templates" / os.listdir(tmp_path / "templates")[0]
    entry.write_bytes(b"\x00not marshal data")
    assert template_env().from_string(TEMPLATE).render(items=["x"]) == "X"
    template_env().from_string(TEMPLATE)
    assert template_env.compiled == [TEMPLATE] * 2


def test_the_plugins_digest_follows_the_collections_filter_files(tmp_path, monkeypatch):
    from ansible import constants
    filters = tmp_path / "ansible_collections" / "lab" / "probe" / "plugins" / "filter"
    path = _write(filters / "probe.py", "class FilterModule:\n    def filters(self):\n        return {}\n")
    monkeypatch.setattr(constants, "COLLECTIONS_PATHS", [str(tmp_path)])
    digests = []
    for _step in (1, 2):
        monkeypatch.setattr(ansiballz_bytecode, "_PLUGINS_DIGEST", [])
        digests.append(ansiballz_bytecode._plugins_digest())
        os.utime(path, ns=(time.time_ns(), time.time_ns() + 10 ** 9))
    assert path in digests[0] and digests[0] != digests[1]


def _patched_manager(runs):
    """A task queue manager class whose run records its play, patched as the hook patches ansible-core's."""
    class Manager:
        def run(self, play):
            runs.append(play)
            return 0
    ansiballz_bytecode.patch_task_queue_manager(type("task_queue_manager", (), {"TaskQueueManager": Manager}))
    return Manager


def test_the_collections_filter_files_are_loaded_once_before_the_first_play(tmp_path, monkeypatch):
    from ansible import constants
    from ansible.plugins.loader import filter_loader
    filters = tmp_path / "ansible_collections" / "lab" / "probe" / "plugins" / "filter"
    _write(filters / "probe.py", "LOADED = 1\n")
    _write(filters / "broken.py", "raise RuntimeError('a broken filter file')\n")
    monkeypatch.setattr(constants, "COLLECTIONS_PATHS", [str(tmp_path)])
    monkeypatch.setattr(ansiballz_bytecode, "_PRELOADED", [])
    monkeypatch.setenv(ansiballz_bytecode.MODULE_ZYGOTE_SWITCH, "0")  # test_module_zygote.py starts zygotes
    monkeypatch.setenv(ansiballz_bytecode.GC_FREEZE_SWITCH, "0")
    for name in ("probe", "broken"):
        monkeypatch.delitem(sys.modules, "ansible_collections.lab.probe.plugins.filter.%s" % name, raising=False)
    runs = []
    manager = _patched_manager(runs)
    assert manager().run("play") == 0 and manager().run("another") == 0
    assert runs == ["play", "another"]
    assert sys.modules["ansible_collections.lab.probe.plugins.filter.probe"].LOADED == 1
    # A file that fails to import is left to the workers, which report it.
    assert "ansible_collections.lab.probe.plugins.filter.broken" not in sys.modules
    assert filter_loader._cached_non_collection_wrappers.get("ansible.builtin.combine") is not None
    monkeypatch.delitem(sys.modules, "ansible_collections.lab.probe.plugins.filter.probe")


@pytest.mark.parametrize("setting, frozen", [(None, 2), ("0", 0)])
def test_each_play_starts_with_the_controllers_objects_frozen_unless_switched_off(monkeypatch, setting, frozen):
    monkeypatch.setenv("COBALTCORE_PRELOAD_JINJA_PLUGINS", "0")
    monkeypatch.setenv(ansiballz_bytecode.MODULE_ZYGOTE_SWITCH, "0")
    if setting is None:
        monkeypatch.delenv(ansiballz_bytecode.GC_FREEZE_SWITCH, raising=False)
    else:
        monkeypatch.setenv(ansiballz_bytecode.GC_FREEZE_SWITCH, setting)
    events = []
    monkeypatch.setattr(ansiballz_bytecode.gc, "freeze", lambda: events.append("freeze"))
    manager = _patched_manager(events)
    assert manager().run("play") == 0 and manager().run("another") == 0
    assert events == (["freeze", "play", "freeze", "another"] if frozen else ["play", "another"])


def test_a_runtime_yml_is_parsed_once_and_read_back_alike(tmp_path, monkeypatch):
    from ansible.utils.collection_loader._collection_meta import _meta_yml_to_dict
    monkeypatch.setattr(ansiballz_bytecode, "RUNTIME_YAML", str(tmp_path / "runtime"))
    parsed = []

    def parse(data, content_id):
        parsed.append(content_id)
        return _meta_yml_to_dict(data, content_id)
    cached = ansiballz_bytecode.cached_runtime_yaml(parse)
    text = b"requires_ansible: '>=2.16'\nplugin_routing:\n  modules:\n    old: {redirect: lab.probe.new}\n"
    first = cached(text, ("lab.probe", "runtime.yml"))
    assert first == {"requires_ansible": ">=2.16", "plugin_routing": {"modules": {"old": {"redirect": "lab.probe.new"}}}}
    again = cached(text.decode(), ("lab.other", "runtime.yml"))
    assert again == first and again is not first and parsed == [("lab.probe", "runtime.yml")]
    cached(text + b"action_groups: {}\n", ("lab.probe", "runtime.yml"))
    assert len(parsed) == 2 and len(os.listdir(tmp_path / "runtime")) == 2
    # A file that is no mapping fails as before, and nothing is kept.
    with pytest.raises(ValueError, match="Mapping"):
        cached(b"- a list\n", ("lab.bad", "runtime.yml"))
    assert len(os.listdir(tmp_path / "runtime")) == 2


def test_the_configuration_definitions_are_parsed_once_and_read_back_alike(tmp_path, monkeypatch):
    monkeypatch.setattr(ansiballz_bytecode, "RUNTIME_YAML", str(tmp_path / "runtime"))
    read = []

    class Manager:
        def _read_config_yaml_file(self, yml_file):
            read.append(yml_file)
            return yaml.safe_load(open(yml_file, "rb"))
    ansiballz_bytecode.patch_config_manager(type("manager", (), {"ConfigManager": Manager}))
    definitions = tmp_path / "base.yml"
    definitions.write_text("DEFAULT_FORKS:\n  default: 5\n  type: integer\n  ini: [{key: forks, section: defaults}]\n")
    first = Manager()._read_config_yaml_file(str(definitions))
    assert first == {"DEFAULT_FORKS": {"default": 5, "type": "integer", "ini": [{"key": "forks", "section": "defaults"}]}}
    assert Manager()._read_config_yaml_file(str(definitions)) == first and len(read) == 1
    definitions.write_text("DEFAULT_FORKS:\n  default: 7\n")
    assert Manager()._read_config_yaml_file(str(definitions)) == {"DEFAULT_FORKS": {"default": 7}} and len(read) == 2
    # A missing file is the manager's to report.
    with pytest.raises(OSError):
        Manager()._read_config_yaml_file(str(tmp_path / "missing.yml"))
