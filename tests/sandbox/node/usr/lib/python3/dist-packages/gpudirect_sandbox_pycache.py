"""SANDBOX speed aid, not part of Google's images: a bytecode cache for code run from zip files.

Ansible runs every module from a zip file (AnsiballZ) in a fresh temporary
directory, and Python compiles what it imports from a zip anew each time: on the
sandbox, where every node shares the test machine's CPUs, that compiling is about
40 % of what a task costs a node.  This hook keeps each compiled module under
/var/tmp/gpudirect-sandbox-pycache/UID, keyed by a hash of the Python version, the
file's place in its zip and its source, so a changed file is compiled again.  What
runs is what Python would compile; only the time differs.  Tracebacks name the zip
the code was read from.  Anything unexpected (another Python, a cache that is not
this user's own) leaves Python's own compiling in place.
"""

import marshal
import os
import stat
import sys

# the environment variable moves it for the hook's own tests
_ROOT = os.environ.get("GPUDIRECT_SANDBOX_PYCACHE", "/var/tmp/gpudirect-sandbox-pycache")
_MARKER = ".zip" + os.sep


def _cache_dir():
    """This user's cache directory, made if missing; None where it is a link or anyone else's."""
    try:
        os.mkdir(_ROOT, 0o755)
        os.chmod(_ROOT, 0o1777)  # shared, like /tmp: whoever makes it first opens it to the others
    except FileExistsError:
        pass
    path = os.path.join(_ROOT, str(os.getuid()))
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return path


def _with_filename(code, filename):
    consts = tuple(_with_filename(c, filename) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _install():
    import zipimport  # pylint: disable=import-outside-toplevel

    compile_source = getattr(zipimport, "_compile_source", None)
    if not callable(compile_source):
        return
    tag = sys.implementation.cache_tag or "python"
    # the directory is looked at on the first import from a zip, not at every Python start
    found = []

    def cached_compile(pathname, source):
        import hashlib  # pylint: disable=import-outside-toplevel  # only where a zip is imported from

        if not found:
            try:
                found.append(_cache_dir())
            except OSError:
                found.append(None)
        cache = found[0]
        if cache is None:
            return compile_source(pathname, source)
        # the part after the zip's own (random, temporary) path names the file in the zip
        cut = pathname.find(_MARKER)
        inner = pathname[cut + len(_MARKER):] if cut >= 0 else pathname
        key = hashlib.sha256(tag.encode() + b"\0" + inner.encode() + b"\0" + source).hexdigest()
        path = os.path.join(cache, key)
        try:
            with open(path, "rb") as fh:
                return _with_filename(marshal.loads(fh.read()), pathname)
        except (OSError, ValueError, EOFError, TypeError):
            pass
        code = compile_source(pathname, source)
        if code is not None:
            tmp = "%s.%d" % (path, os.getpid())
            try:
                with open(tmp, "wb") as fh:
                    fh.write(marshal.dumps(code))
                os.replace(tmp, path)
            except OSError:
                pass
        return code

    zipimport._compile_source = cached_compile  # pylint: disable=protected-access


try:
    _install()
except Exception:  # pylint: disable=broad-except
    pass  # a speed aid: Python compiles as it always does
