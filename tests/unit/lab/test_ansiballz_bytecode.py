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
    assert (purelib / ("%s.pth" % ansiballz_bytecode.MODULE)).read_text() == (
        "import {0}; {0}.enable()\n".format(ansiballz_bytecode.MODULE))
    assert sorted(os.listdir(cache)) == ["recent"]


def test_make_setup_enabled_it_in_the_venv():
    if not sys.prefix.startswith(os.path.join(REPO, ".venv")) and os.path.realpath(sys.prefix) != os.path.realpath(
            os.path.join(REPO, ".venv")):
        pytest.fail("the unit tests run in the project's venv (make unit): %s" % sys.prefix)
    assert zipimport._compile_source.__module__ == ansiballz_bytecode.MODULE


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
    monkeypatch.delitem(sys.modules, ansiballz_bytecode.COLLECTION_LOADER, raising=False)
    monkeypatch.delitem(sys.modules, ansiballz_bytecode.MODULE_COMMON, raising=False)
    ansiballz_bytecode.enable()
    assert (zipimport._compile_source is ansiballz_bytecode.cached_compile) is enabled
    patches = sorted(f.name for f in sys.meta_path if isinstance(f, ansiballz_bytecode.ImportPatch))
    assert patches == (sorted([ansiballz_bytecode.COLLECTION_LOADER, ansiballz_bytecode.MODULE_COMMON])
                       if enabled else [])


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
