# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A bytecode cache for the venv's Python: the AnsiballZ modules' sources and the collection loader's.

Every module Ansible runs is an AnsiballZ zip, and Python compiles each source it imports from a
zip anew (zipimport writes no .pyc): about 0.15 CPU-s per module run for ansible.module_utils.basic
and the collection's module_utils, the largest part of a module run that only reads. This hook
keeps the compiled code of each source text, keyed by its SHA-256 and the interpreter's magic
number, so an unchanged source is compiled once per machine instead of once per module run.

Nothing else changes: zipimport still finds and reads every file in the zip (a module_utils the
zip lacks still fails to import), the code is the compiler's for that exact text, and its file
names are set to the zip's paths (tracebacks name the running module as before). Any problem
with the cache falls back to compiling.

`make setup` installs it into the venv (`python lab/ansiballz_bytecode.py install`): this file
as a module of site-packages and a .pth that imports it when the interpreter starts. The cache
lives in the venv (`<venv>/ansiballz-bytecode`), as the venv's own bytecode does.
`COBALTCORE_ANSIBALLZ_BYTECODE=0` in the environment turns it off for a run.

The controller has the same cost: ansible-core's collection loader compiles every plugin and
module_utils source of a collection when it imports it (it writes no .pyc either), and each of
ansible-playbook's forked workers imports them anew; a task whose arguments use one of the
collection's filters imports the filter files until it finds the filter. The same cache serves
that loader's compile (the same call as zipimport's), patched when the loader's module is imported.

Ansible also builds each module's AnsiballZ zip anew in every `ansible-playbook` run: the zip cache
lives in the run's own temporary directory, so the first task that uses a module walks its
module_utils (parsing each source) while the run's other workers wait for it, about 0.3 CPU-s per
module and run. The hook keeps those zips in the venv (`<venv>/ansiballz-zips/<sources>`), under
a directory named by a digest of everything a zip is built from that can change here: ansible-core's
and the `ansible` package's versions, and the name, size and modification time of every file of
ansible-core's module_utils and of the module's own collection's module_utils and modules. Any
edit of those is a new directory, so a zip is never older than its sources.
`COBALTCORE_ANSIBALLZ_ZIPS=0` turns off only this part.
"""
from __future__ import annotations

import builtins
import hashlib
import importlib.util
import marshal
import os
import shutil
import sys
import time
import zipimport

import _imp
from importlib.util import MAGIC_NUMBER

MODULE = "cobaltcore_ansiballz_bytecode"
CACHE = os.path.join(sys.prefix, "ansiballz-bytecode")
KEEP_DAYS = 14  # `install` removes entries older than this (sources of earlier commits)
COLLECTION_LOADER = "ansible.utils.collection_loader._collection_finder"
MODULE_COMMON = "ansible.executor.module_common"
ZIPS = os.path.join(sys.prefix, "ansiballz-zips")

_compile_source = zipimport._compile_source  # pylint: disable=protected-access


def _key(source):
    digest = hashlib.sha256(MAGIC_NUMBER + bytes([sys.flags.optimize]) + source)
    return digest.hexdigest()


def cached_compile(pathname, source):
    """zipimport's compile of `source`, from the cache when an earlier run compiled the same text."""
    path = os.path.join(CACHE, _key(source))
    try:
        with open(path, "rb") as handle:
            code = marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):
        code = _compile_source(pathname, source)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            partial = "%s.%d.tmp" % (path, os.getpid())
            with open(partial, "wb") as handle:
                handle.write(marshal.dumps(code))
            os.replace(partial, path)  # whole or not at all, for processes reading at the same time
        except OSError:
            pass
        return code
    # The cached code names the zip of the run that compiled it; name this run's instead.
    _imp._fix_co_filename(code, pathname)  # pylint: disable=protected-access
    return code


def loader_compile(source, filename, mode, flags=0, dont_inherit=False, optimize=-1):
    """`compile` as the collection loader's module sees it: its one call (a file's bytes, exec, no
    inherited flags) is zipimport's compile and comes from the cache; any other call is the builtin's."""
    if isinstance(source, bytes) and mode == "exec" and not flags and dont_inherit and optimize == -1:
        return cached_compile(filename, source)
    return builtins.compile(source, filename, mode, flags, dont_inherit, optimize)


class ImportPatch:
    """A meta path finder that only watches for one module and calls patch(module) once it is imported."""

    def __init__(self, name, patch):
        self.name, self.patch = name, patch

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            self.patch(module)

        spec.loader.exec_module = exec_and_patch
        return spec


def patch_collection_loader(module):
    module.compile = loader_compile  # a module global comes before the builtin


def _tree_stamps(root):
    """(relative path, size, mtime) of every source file under root, sorted."""
    stamps = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [name for name in dirs if name != "__pycache__"]  # bytecode comes and goes with the sources
        for name in files:
            path = os.path.join(folder, name)
            try:
                stat = os.stat(path)
            except OSError:
                continue
            stamps.append((os.path.relpath(path, root), stat.st_size, stat.st_mtime_ns))
    return sorted(stamps)


def _bundle_version(site_packages):
    """The `ansible` package's version (its collections): the names of its dist-info directories."""
    try:
        return sorted(name for name in os.listdir(site_packages)
                      if name.startswith("ansible-") and name[8:9].isdigit() and name.endswith(".dist-info"))
    except OSError:
        return []


def zips_directory(module_path, module_utils_root):
    """The directory of the zips built from this module's sources as they are now (see the module's doc)."""
    parts = [MAGIC_NUMBER.hex(), getattr(sys.modules.get("ansible.release"), "__version__", ""),
             _bundle_version(os.path.dirname(os.path.dirname(module_utils_root)))]
    parts.append(_tree_stamps(module_utils_root))
    modules = os.path.dirname(os.path.abspath(module_path))
    plugins = os.path.dirname(modules)
    if os.path.basename(modules) == "modules" and os.path.basename(plugins) == "plugins":  # a collection's
        parts.append(_tree_stamps(os.path.join(plugins, "module_utils")))
        parts.append(_tree_stamps(modules))
    else:  # a module of ansible-core itself, or one from elsewhere: its own file
        stat = os.stat(module_path)
        parts.append((os.path.abspath(module_path), stat.st_size, stat.st_mtime_ns))
    return os.path.join(ZIPS, hashlib.sha256(repr(parts).encode()).hexdigest())


def patch_module_common(module):
    """module_common builds a zip under C.DEFAULT_LOCAL_TMP/ansiballz_cache: point it at the venv's directory
    for the module's current sources while it looks for or builds one."""
    find_module_utils = module._find_module_utils  # pylint: disable=protected-access
    constants = module.C
    module_utils_root = os.path.join(os.path.dirname(os.path.dirname(module.__file__)), "module_utils")

    def cached_find_module_utils(**kwargs):
        try:
            directory = zips_directory(kwargs["module_path"], module_utils_root)
        except (OSError, KeyError, TypeError):
            return find_module_utils(**kwargs)
        run_tmp = constants.DEFAULT_LOCAL_TMP
        constants.DEFAULT_LOCAL_TMP = directory  # the zips go to <directory>/ansiballz_cache
        try:
            return find_module_utils(**kwargs)
        finally:
            constants.DEFAULT_LOCAL_TMP = run_tmp

    module._find_module_utils = cached_find_module_utils  # pylint: disable=protected-access


def enable():
    """Called by the .pth at start-up; COBALTCORE_ANSIBALLZ_BYTECODE=0 leaves every compile and zip as it is (to
    compare), COBALTCORE_ANSIBALLZ_ZIPS=0 only the zips."""
    if os.environ.get("COBALTCORE_ANSIBALLZ_BYTECODE", "1") == "0":
        return
    zipimport._compile_source = cached_compile  # pylint: disable=protected-access
    if COLLECTION_LOADER not in sys.modules:
        sys.meta_path.insert(0, ImportPatch(COLLECTION_LOADER, patch_collection_loader))
    if os.environ.get("COBALTCORE_ANSIBALLZ_ZIPS", "1") != "0" and MODULE_COMMON not in sys.modules:
        sys.meta_path.insert(0, ImportPatch(MODULE_COMMON, patch_module_common))


def install(purelib):
    """This file as a module of `purelib`, a .pth that imports it, and old cache entries pruned."""
    with open(__file__, "rb") as handle:
        text = handle.read()
    pth = ("import {0}; {0}.enable()\n".format(MODULE)).encode()
    for path, content in ((os.path.join(purelib, MODULE + ".py"), text), (os.path.join(purelib, MODULE + ".pth"), pth)):
        with open(path, "wb") as handle:
            handle.write(content)
    limit = time.time() - KEEP_DAYS * 86400
    if os.path.isdir(CACHE):
        for entry in os.scandir(CACHE):
            if entry.stat().st_mtime < limit:
                os.unlink(entry.path)
    if os.path.isdir(ZIPS):
        for entry in os.scandir(ZIPS):
            if entry.stat().st_mtime < limit:
                shutil.rmtree(entry.path, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] != ["install"]:
        sys.exit("usage: python lab/ansiballz_bytecode.py install")
    import sysconfig
    install(sysconfig.get_paths()["purelib"])
