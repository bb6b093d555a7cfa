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

Two more costs of every worker are the same work done again in each process:
- Jinja compiles a task's templates to Python in every worker that templates them (the same task on
  eight hosts: eight compiles), about a fifth of a no-op site.yml's CPU. The hook keeps the compiled
  code of a template text in the venv (`<venv>/jinja-bytecode`), keyed by the text, the environment's
  settings that shape the generated code, ansible-core's, Jinja's and the `ansible` package's versions,
  and the name, size and modification time of every filter and test plugin file in the configured
  collection paths (the compiler looks filters and tests up to generate their calls). Only text
  templates without Ansible's template debugging are cached; a template that fails to compile fails as
  before. `COBALTCORE_JINJA_BYTECODE=0` turns off only this part.
- Each worker imports the filter and test plugin files its templates use (the collection's filter files
  import most of its module_utils), about a tenth of a no-op site.yml's CPU. Before the first play,
  the hook has ansible-playbook's own process load ansible-core's filters and tests and import the
  filter and test files of the configured collection paths, so the forked workers find them loaded. A
  file that fails to import is left to the workers, which report it as before.
  `COBALTCORE_PRELOAD_JINJA_PLUGINS=0` turns off only this part.

And two costs of every start of ansible-playbook (and of every other Ansible command): the collection loader
parses ansible-core's routing table (`ansible_builtin_runtime.yml`, 370 kB of YAML, ~0.18 CPU-s) and each
collection's `meta/runtime.yml` anew, and the configuration manager its option definitions (`config/base.yml`,
90 kB, ~0.06 CPU-s). The loader's parser is meant to be replaced by one that caches (it gets a content id for
that); the hook keeps the parsed data of a file's bytes in the venv (`<venv>/runtime-yaml`, keyed by the
bytes' SHA-256, the parser and PyYAML's version). `COBALTCORE_RUNTIME_YAML=0` turns off only this part.

Last, every module task started a new interpreter that imported ansible.module_utils.basic before its module
ran (~0.2 of its ~0.3 CPU-s). Before the first play the hook starts a zygote for the run
(cobaltcore_module_zygote, lab/module_zygote.py), and the local connection of every action plugin hands
Ansible's module commands to it: a process forked from an interpreter that has imported what every module
run imports runs the same AnsiballZ file with the command's stdio, environment and working directory.
`COBALTCORE_MODULE_ZYGOTE=0` turns off only this part.

And before each play the hook moves what ansible-playbook's process holds to the collector's permanent
generation (gc.freeze): the play's forked workers then never walk those objects in their collections
(each walk also copies the pages it touches). `COBALTCORE_GC_FREEZE=0` turns off only this part.
"""
from __future__ import annotations

import builtins
import gc
import glob
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
CONFIG_MANAGER = "ansible.config.manager"
MODULE_COMMON = "ansible.executor.module_common"
ZIPS = os.path.join(sys.prefix, "ansiballz-zips")
JINJA_BITS = "ansible._internal._templating._jinja_bits"
TASK_QUEUE_MANAGER = "ansible.executor.task_queue_manager"
TEMPLATES = os.path.join(sys.prefix, "jinja-bytecode")
ACTION_BASE = "ansible.plugins.action"
# Each part's switch: on unless the environment sets it to "0" (switched_on).
BYTECODE_SWITCH = "COBALTCORE_ANSIBALLZ_BYTECODE"
ZIPS_SWITCH = "COBALTCORE_ANSIBALLZ_ZIPS"
RUNTIME_YAML_SWITCH = "COBALTCORE_RUNTIME_YAML"
JINJA_BYTECODE_SWITCH = "COBALTCORE_JINJA_BYTECODE"
PRELOAD_SWITCH = "COBALTCORE_PRELOAD_JINJA_PLUGINS"
MODULE_ZYGOTE_SWITCH = "COBALTCORE_MODULE_ZYGOTE"
GC_FREEZE_SWITCH = "COBALTCORE_GC_FREEZE"
ZYGOTE_MODULE = "cobaltcore_module_zygote"
RUNTIME_YAML = os.path.join(sys.prefix, "runtime-yaml")
# The environment's settings that shape the code Jinja generates (the lexer's and the code generator's).
TEMPLATE_SETTINGS = ("block_start_string", "block_end_string", "variable_start_string", "variable_end_string",
                     "comment_start_string", "comment_end_string", "line_statement_prefix", "line_comment_prefix",
                     "trim_blocks", "lstrip_blocks", "newline_sequence", "keep_trailing_newline", "optimized",
                     "is_async")

_compile_source = zipimport._compile_source  # pylint: disable=protected-access


def _key(source):
    digest = hashlib.sha256(MAGIC_NUMBER + bytes([sys.flags.optimize]) + source)
    return digest.hexdigest()


def kept(path, compute):
    """(value, True) as an earlier process kept it at path, else (compute(), False), kept there when marshal can
    write it. A damaged or unreadable entry is computed again; a cache that cannot be written is skipped."""
    try:
        with open(path, "rb") as handle:
            return marshal.loads(handle.read()), True
    except (OSError, ValueError, EOFError, TypeError):
        pass
    value = compute()
    try:
        data = marshal.dumps(value)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = "%s.%d.tmp" % (path, os.getpid())
        with open(partial, "wb") as handle:
            handle.write(data)
        os.replace(partial, path)  # whole or not at all, for processes reading at the same time
    except (OSError, ValueError):  # ValueError: not marshal's data
        pass
    return value, False


def cached_compile(pathname, source):
    """zipimport's compile of `source`, from the cache when an earlier run compiled the same text."""
    code, cached = kept(os.path.join(CACHE, _key(source)), lambda: _compile_source(pathname, source))
    if cached:  # the cached code names the zip of the run that compiled it; name this run's instead
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


def _parsed_yaml_path(parser, data):
    """Where RUNTIME_YAML keeps what `parser` made of these YAML bytes (PyYAML's version and C loader in the key)."""
    import yaml  # pylint: disable=import-outside-toplevel
    head = repr((parser, yaml.__version__, yaml.__with_libyaml__)).encode()
    return os.path.join(RUNTIME_YAML, hashlib.sha256(head + b"\0" + data).hexdigest())


def cached_runtime_yaml(parse):
    """The collection loader's parse of a runtime.yml, from the cache when an earlier run parsed the same bytes."""

    def parse_cached(yaml_string_data, content_id):
        data = yaml_string_data.encode("utf-8") if isinstance(yaml_string_data, str) else bytes(yaml_string_data)
        try:
            path = _parsed_yaml_path("runtime", data)
        except Exception:  # pylint: disable=broad-except
            return parse(yaml_string_data, content_id)
        return kept(path, lambda: parse(yaml_string_data, content_id))[0]

    return parse_cached


def patch_config_manager(module):
    """The configuration manager's parse of its definitions file, from the cache when an earlier run parsed the
    same bytes (a plain YAML document: marshal keeps it whole)."""
    read_definitions = module.ConfigManager._read_config_yaml_file  # pylint: disable=protected-access

    def read_cached(self, yml_file):
        try:
            with open(yml_file, "rb") as handle:
                path = _parsed_yaml_path("config", handle.read())
        except Exception:  # pylint: disable=broad-except
            return read_definitions(self, yml_file)  # a missing file fails there, as before
        return kept(path, lambda: read_definitions(self, yml_file))[0]

    module.ConfigManager._read_config_yaml_file = read_cached  # pylint: disable=protected-access


def switched_on(switch):
    return os.environ.get(switch, "1") != "0"


def patch_collection_loader(module):
    module.compile = loader_compile  # a module global comes before the builtin
    parse = getattr(module, "_meta_yml_to_dict", None)
    if parse is not None and switched_on(RUNTIME_YAML_SWITCH):
        module._meta_yml_to_dict = cached_runtime_yaml(parse)  # pylint: disable=protected-access


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


def _jinja_plugin_files():
    """[(collection path root, file)] of every filter and test plugin file in the configured collection paths."""
    from ansible import constants  # pylint: disable=import-outside-toplevel
    files = []
    for root in constants.COLLECTIONS_PATHS:
        for kind in ("filter", "test"):
            pattern = os.path.join(root, "ansible_collections", "*", "*", "plugins", kind, "*.py")
            files.extend((root, path) for path in sorted(glob.glob(pattern)))
    return files


_PLUGINS_DIGEST = []


def _plugins_digest():
    """A digest of what the compiler's filter and test look-ups can find, once per process."""
    if not _PLUGINS_DIGEST:
        from ansible import constants  # pylint: disable=import-outside-toplevel
        import jinja2  # pylint: disable=import-outside-toplevel
        site_packages = os.path.dirname(os.path.dirname(os.path.abspath(constants.__file__)))
        parts = [MAGIC_NUMBER.hex(), sys.flags.optimize, getattr(sys.modules.get("ansible.release"), "__version__", ""),
                 jinja2.__version__, _bundle_version(site_packages)]
        for _root, path in _jinja_plugin_files():
            stat = os.stat(path)
            parts.append((path, stat.st_size, stat.st_mtime_ns))
        for folder in list(constants.DEFAULT_FILTER_PLUGIN_PATH or []) + list(constants.DEFAULT_TEST_PLUGIN_PATH or []):
            parts.append(_tree_stamps(folder))
        _PLUGINS_DIGEST.append(repr(parts))
    return _PLUGINS_DIGEST[0]


def template_key(environment, source, name, filename, defer_init, escape_backslashes):
    """The cache key of a template text compiled by this environment, or None when it must not be cached."""
    autoescape, finalize = environment.autoescape, environment.finalize
    if not isinstance(autoescape, bool):  # a function of the template's name
        return None
    settings = [type(environment).__module__, type(environment).__qualname__, autoescape, sorted(environment.extensions),
                None if finalize is None else (getattr(finalize, "__qualname__", repr(finalize)),
                                               repr(getattr(finalize, "jinja_pass_arg", None)))]
    settings.extend(getattr(environment, setting) for setting in TEMPLATE_SETTINGS)
    head = repr((_plugins_digest(), settings, name, filename, defer_init, escape_backslashes))
    return hashlib.sha256(head.encode() + b"\0" + source.encode("utf-8", "surrogatepass")).hexdigest()


def patch_jinja_bits(module):
    """Jinja's compile of a template text, from the cache when an earlier process compiled the same text alike."""
    environment_class = module.AnsibleEnvironment
    compile_template = environment_class.compile
    compile_context = module._TemplateCompileContext  # pylint: disable=protected-access

    def cached_template_compile(self, source, name=None, filename=None, raw=False, defer_init=False):
        if raw or not isinstance(source, str) or getattr(self, "_debuggable_template_source", False):
            return compile_template(self, source, name, filename, raw, defer_init)
        try:
            context = compile_context.current(optional=True)
            key = template_key(self, source, name, filename, defer_init, getattr(context, "escape_backslashes", None))
        except Exception:  # pylint: disable=broad-except
            key = None
        if key is None:
            return compile_template(self, source, name, filename, raw, defer_init)
        return kept(os.path.join(TEMPLATES, key),
                    lambda: compile_template(self, source, name, filename, raw, defer_init))[0]

    environment_class.compile = cached_template_compile


_PRELOADED = []


def preload_jinja_plugins():
    """Load ansible-core's filters and tests and import the collections' filter and test files, once per process."""
    if _PRELOADED:
        return
    _PRELOADED.append(True)
    from ansible.plugins.loader import filter_loader, test_loader  # pylint: disable=import-outside-toplevel
    for loader in (filter_loader, test_loader):
        try:
            loader._ensure_non_collection_wrappers()  # pylint: disable=protected-access
        except Exception:  # pylint: disable=broad-except
            pass
    for root, path in _jinja_plugin_files():
        parts = os.path.relpath(path, root)[:-len(".py")].split(os.sep)
        loader = filter_loader if parts[4] == "filter" else test_loader
        try:
            loader._load_module_source(python_module_name=".".join(parts), path=path)  # pylint: disable=protected-access
        except Exception:  # pylint: disable=broad-except
            pass  # the worker that needs it loads it again and reports the error


def patch_task_queue_manager(module):
    run_play = module.TaskQueueManager.run

    def run_with_hook_parts(self, play):
        if switched_on(PRELOAD_SWITCH):
            preload_jinja_plugins()
        if switched_on(MODULE_ZYGOTE_SWITCH):
            start_module_zygote()
        if switched_on(GC_FREEZE_SWITCH):
            # The workers forked for this play's tasks leave what ansible-playbook holds now to its own
            # collector: theirs never walks (and so never copies) those objects.
            gc.freeze()
        return run_play(self, play)

    module.TaskQueueManager.run = run_with_hook_parts


_ZYGOTE = {}  # set in ansible-playbook's own process before its first play, so that every forked worker has it


def start_module_zygote():
    """Start this run's module zygote (cobaltcore_module_zygote) once; without it modules start as before."""
    if _ZYGOTE:
        return
    _ZYGOTE["tried"] = True
    try:
        import atexit  # pylint: disable=import-outside-toplevel
        import cobaltcore_module_zygote as zygote  # pylint: disable=import-outside-toplevel
        process, path = zygote.start()
    except Exception:  # pylint: disable=broad-except
        return
    _ZYGOTE.update(process=process, path=path)
    atexit.register(_stop_module_zygote, process, os.getpid())


def _stop_module_zygote(process, owner):
    if os.getpid() == owner and process.poll() is None:  # forked workers inherit the atexit list
        process.terminate()
        process.wait()


def exec_module_in_zygote(connection, exec_command, cmd, in_data=None, sudoable=True):
    """A local connection's exec_command: a module command through the zygote, anything else as before."""
    path = _ZYGOTE.get("path")
    become = connection.become is not None and getattr(connection.become, "_id", None)
    if path and not in_data and not become:
        import cobaltcore_module_zygote as zygote  # pylint: disable=import-outside-toplevel
        found = zygote.module_command(cmd, sys.executable)
        if found is not None:
            from ansible.utils.display import Display  # pylint: disable=import-outside-toplevel
            # As local's exec_command prints it.
            Display().vvv("EXEC {0}".format(cmd), host=connection._play_context.remote_addr)  # pylint: disable=protected-access
            try:
                cwd = os.fsdecode(connection.cwd) if connection.cwd else None  # bytes, set by the action plugin
                return zygote.run(path, found[1], found[0], cwd=cwd)
            except zygote.NotStarted:
                _ZYGOTE.pop("path", None)  # the zygote is gone: this and later commands start as before
    return exec_command(cmd, in_data=in_data, sudoable=sudoable)


def patch_action_base(module):
    """Action plugins run every command through _low_level_execute_command; its local connection gets the zygote.
    (The plugin loader imports connection plugins from their files, past any import hook.)"""
    # pylint: disable=protected-access
    low_level_execute = module.ActionBase._low_level_execute_command

    def low_level_execute_with_zygote(self, *args, **kwargs):
        connection = self._connection
        if getattr(connection, "transport", None) == "local" and "exec_command" not in vars(connection):
            exec_command = connection.exec_command
            connection.exec_command = lambda cmd, in_data=None, sudoable=True: exec_module_in_zygote(
                connection, exec_command, cmd, in_data=in_data, sudoable=sudoable)
        return low_level_execute(self, *args, **kwargs)

    module.ActionBase._low_level_execute_command = low_level_execute_with_zygote


def enable():
    """Called by the .pth at start-up; COBALTCORE_ANSIBALLZ_BYTECODE=0 leaves every compile and zip as it is (to
    compare), COBALTCORE_ANSIBALLZ_ZIPS=0 only the zips."""
    if not switched_on(BYTECODE_SWITCH):
        return
    zipimport._compile_source = cached_compile  # pylint: disable=protected-access
    if COLLECTION_LOADER not in sys.modules:
        sys.meta_path.insert(0, ImportPatch(COLLECTION_LOADER, patch_collection_loader))
    if switched_on(ZIPS_SWITCH) and MODULE_COMMON not in sys.modules:
        sys.meta_path.insert(0, ImportPatch(MODULE_COMMON, patch_module_common))
    if switched_on(RUNTIME_YAML_SWITCH) and CONFIG_MANAGER not in sys.modules:
        sys.meta_path.insert(0, ImportPatch(CONFIG_MANAGER, patch_config_manager))
    if switched_on(JINJA_BYTECODE_SWITCH) and JINJA_BITS not in sys.modules:
        sys.meta_path.insert(0, ImportPatch(JINJA_BITS, patch_jinja_bits))
    preload = switched_on(PRELOAD_SWITCH)
    zygote = switched_on(MODULE_ZYGOTE_SWITCH)
    freeze = switched_on(GC_FREEZE_SWITCH)
    if (preload or zygote or freeze) and TASK_QUEUE_MANAGER not in sys.modules:
        sys.meta_path.insert(0, ImportPatch(TASK_QUEUE_MANAGER, patch_task_queue_manager))
    if zygote and ACTION_BASE not in sys.modules:
        sys.meta_path.insert(0, ImportPatch(ACTION_BASE, patch_action_base))


def install(purelib):
    """This file as a module of `purelib` with its bytecode, a .pth that imports it, and old cache entries pruned."""
    import py_compile  # pylint: disable=import-outside-toplevel
    with open(__file__, "rb") as handle:
        text = handle.read()
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "module_zygote.py"), "rb") as handle:
        zygote_text = handle.read()
    pth = ("import {0}; {0}.enable()\n".format(MODULE)).encode()
    module = os.path.join(purelib, MODULE + ".py")
    zygote = os.path.join(purelib, ZYGOTE_MODULE + ".py")
    for path, content in ((module, text), (zygote, zygote_text), (os.path.join(purelib, MODULE + ".pth"), pth)):
        with open(path, "wb") as handle:
            handle.write(content)
    # Every interpreter of the venv imports the module at start-up; with PYTHONDONTWRITEBYTECODE set (as on this
    # machine kind) it would compile it each time.
    for path in (module, zygote):
        py_compile.compile(path, cfile=importlib.util.cache_from_source(path), doraise=True)
    limit = time.time() - KEEP_DAYS * 86400
    for folder in (CACHE, ZIPS, TEMPLATES, RUNTIME_YAML):
        if os.path.isdir(folder):
            for entry in os.scandir(folder):
                if entry.stat().st_mtime >= limit:
                    continue
                if entry.is_dir():
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)


if __name__ == "__main__":
    if sys.argv[1:2] != ["install"]:
        sys.exit("usage: python lab/ansiballz_bytecode.py install")
    import sysconfig
    install(sysconfig.get_paths()["purelib"])
