# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What goes into the sandbox's execution environment, for scripts/build-ee.sh.

  python ee_inputs.py definition SHIPPED OVERRIDES OUT
      writes OUT: the shipped definition (awx/ee/execution-environment.yml)
      with the sandbox's overrides merged over it (mappings key by key, any
      other value replaces, null removes the key).
  python ee_inputs.py deps GALAXY_YML DEST
      copies every collection galaxy.yml depends on from this Python's own
      collections (the controller's `ansible` package) into DEST/ansible_collections,
      checking each version against galaxy.yml; Galaxy is never asked.
  python ee_inputs.py digest FILE_OR_TARBALL...
      one hash of the build inputs: a collection tarball counts by its
      MANIFEST.json and FILES.json (a checksum of every file, but no
      timestamps), any other file by its bytes.

Bad input ends with one line on stderr naming what is at fault, exit status 2.
"""

import hashlib
import json
import os
import shutil
import sys
import tarfile

import yaml


class InputError(Exception):
    """An input the build cannot use; the message names it."""


def declared_dependencies(galaxy_yml):
    """The `dependencies` of a galaxy.yml as {"ns.name": "version range"}."""
    try:
        with open(galaxy_yml, encoding="utf-8") as handle:
            meta = yaml.safe_load(handle) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise InputError("%s: cannot be read: %s" % (galaxy_yml, exc)) from exc
    deps = meta.get("dependencies") or {}
    if not isinstance(deps, dict):
        raise InputError("%s: dependencies must be a mapping of collection to version range" % galaxy_yml)
    return {str(name): str(spec if spec is not None else "*") for name, spec in deps.items()}


def installed_version(path):
    """The version in an installed collection's MANIFEST.json (None without one)."""
    try:
        with open(os.path.join(path, "MANIFEST.json"), encoding="utf-8") as handle:
            return json.load(handle)["collection_info"]["version"]
    except (OSError, ValueError, KeyError):
        return None


def version_fits(version, spec):
    """Whether version meets a galaxy.yml range ("*", ">=1.2,<3", "==2.0.0")."""
    # ansible-galaxy's own comparison, so the EE agrees with what it would accept
    from ansible.galaxy.dependency_resolution.versioning import meets_requirements
    return meets_requirements(version, spec)


def find_collection(name, roots):
    """(path, version) of the first installed collection `name` under roots."""
    namespace, _dot, coll = name.partition(".")
    for root in roots:
        path = os.path.join(root, namespace, coll)
        version = installed_version(path)
        if version:
            return path, version
    return None, None


def copy_dependencies(galaxy_yml, dest, roots):
    """Copy each dependency into dest/ansible_collections; returns [(name, version, path)]."""
    copied = []
    target_root = os.path.join(dest, "ansible_collections")
    if os.path.isdir(target_root):
        shutil.rmtree(target_root)
    os.makedirs(target_root)
    for name, spec in sorted(declared_dependencies(galaxy_yml).items()):
        if name.count(".") != 1:
            raise InputError("%s: dependency %r is not a namespace.name" % (galaxy_yml, name))
        path, version = find_collection(name, roots)
        if path is None:
            raise InputError("%s: dependency %s is not installed on the controller (looked in %s)"
                             % (galaxy_yml, name, ", ".join(roots) or "no collection path"))
        if not version_fits(version, spec):
            raise InputError("%s: dependency %s %s wanted, the controller has %s (%s)"
                             % (galaxy_yml, name, spec, version, path))
        shutil.copytree(path, os.path.join(target_root, *name.split(".")),
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        copied.append((name, version, path))
    return copied


def controller_roots():
    """Where this Python finds collections: the `ansible` package's ansible_collections."""
    try:
        import ansible_collections
    except ImportError:
        return []
    return [os.path.abspath(p) for p in ansible_collections.__path__]


def merged(base, overrides):
    """base with overrides merged over it: mappings key by key, null removes, others replace."""
    out = dict(base)
    for key, value in overrides.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def load_mapping(path):
    """A YAML file that must hold a mapping."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except (OSError, yaml.YAMLError) as exc:
        raise InputError("%s: cannot be read: %s" % (path, exc)) from exc
    if not isinstance(data, dict):
        raise InputError("%s: not a mapping" % path)
    return data


def write_definition(shipped, overrides, out):
    """Write the shipped definition with the overrides merged over it; returns the result."""
    definition = merged(load_mapping(shipped), load_mapping(overrides))
    if definition.get("version") != 3:
        raise InputError("%s: not an ansible-builder version 3 definition" % shipped)
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("---\n# %s with %s merged over it (ee_inputs.py)\n" % (shipped, overrides))
        yaml.safe_dump(definition, handle, sort_keys=False)
    return definition


def digest(paths):
    """One sha256 over the inputs (collection tarballs by content, not timestamps)."""
    total = hashlib.sha256()
    for path in paths:
        total.update(os.path.basename(path).encode() + b"\0")
        if path.endswith(".tar.gz"):
            try:
                with tarfile.open(path) as tar:
                    for member in ("MANIFEST.json", "FILES.json"):
                        total.update(tar.extractfile(member).read())
            except (OSError, tarfile.TarError, KeyError, AttributeError) as exc:
                raise InputError("%s: not a collection tarball (%s)" % (path, exc)) from exc
        else:
            try:
                with open(path, "rb") as handle:
                    total.update(handle.read())
            except OSError as exc:
                raise InputError("%s: cannot be read: %s" % (path, exc)) from exc
    return total.hexdigest()


def main(argv):
    """Command line: deps GALAXY_YML DEST | definition SHIPPED OVERRIDES OUT | digest PATH..."""
    try:
        if len(argv) == 3 and argv[0] == "deps":
            for name, version, path in copy_dependencies(argv[1], argv[2], controller_roots()):
                print("%s %s (from %s)" % (name, version, path))
            return 0
        if len(argv) == 4 and argv[0] == "definition":
            write_definition(*argv[1:])
            return 0
        if len(argv) >= 2 and argv[0] == "digest":
            print(digest(argv[1:]))
            return 0
    except InputError as exc:
        sys.stderr.write("ee_inputs: %s\n" % exc)
        return 2
    sys.stderr.write("usage: ee_inputs.py deps GALAXY_YML DEST | definition SHIPPED OVERRIDES OUT | digest PATH...\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
