# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writes what ansible-builder needs to build the execution environment into OUT
(what `make ee` runs; README.md beside this file):

  python prepare.py [--base aap|community] [--tarball FILE | --git URL [--ref REF]]
                    [--create | --build [--tag TAG] [--container-runtime podman|docker]] OUT

OUT gets the base's definition and galaxy requirements, and the collection:
  - by default the tarball, built with `ansible-galaxy collection build` from
    the checkout this file is in, as OUT/collections/gpudirect-gcp.tar.gz;
  - --tarball FILE: that tarball instead (from an installed collection, which
    has nothing to build from);
  - --git URL: no tarball; the requirements name the collection's git
    repository (at --ref, else its default branch) and the image gets git.
--create then runs `ansible-builder create` (OUT/context), --build
`ansible-builder build`.  A bad input ends with one line on stderr, exit 2.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# base -> (definition, its galaxy requirements)
BASES = {
    "aap": ("execution-environment.yml", "requirements.yml"),
    "community": ("execution-environment-community.yml", "requirements-community.yml"),
    # the EDA controller's decision environment: the rulebooks and the event source
    "de": ("decision-environment.yml", "requirements-de.yml"),
}
TARBALL = os.path.join("collections", "gpudirect-gcp.tar.gz")
# marks OUT as written here, so that a rerun may empty it and nothing else
MARKER = ".gpudirect-ee-prepared"
# hosts reserved for examples (RFC 2606, RFC 6761): a URL on one is a
# placeholder nobody replaced, and would only fail inside the image build
PLACEHOLDER_HOST = re.compile(r"(^|\.)(example\.(com|net|org)|example|invalid|test|localhost)$", re.I)
GIT_URL = re.compile(r"^(?:(?:https?|ssh|git|file)://(?:[^@/]+@)?(?P<host>[^/:]*)(?::\d+)?/\S+"
                     r"|(?:[\w.-]+@)?(?P<scp_host>[\w.-]+):(?!//)\S+)$")


class PrepareError(Exception):
    """An input that cannot be used; the message names it."""


def tool(name):
    """An Ansible tool beside this Python (its virtualenv), else on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), name)
    found = beside if os.access(beside, os.X_OK) else shutil.which(name)
    if not found:
        raise PrepareError("%s not found beside %s nor on PATH" % (name, sys.executable))
    return found


def check_git_url(url):
    if not url:
        raise PrepareError("--git needs the URL of the collection's git repository")
    match = GIT_URL.match(url)
    if not match:
        raise PrepareError("%s is not a git URL (https://, ssh://, git://, file:// or user@host:path)" % url)
    host = match.group("host") if match.group("host") is not None else match.group("scp_host")
    if not url.startswith("file://") and PLACEHOLDER_HOST.search(host or ""):
        raise PrepareError("%s is a placeholder: give the URL where the collection is published" % url)


def check_tarball(path):
    """The namespace, name and version in a collection tarball's MANIFEST.json."""
    try:
        with tarfile.open(path) as tar:
            info = json.load(tar.extractfile("MANIFEST.json"))["collection_info"]
    except (OSError, tarfile.TarError, KeyError, ValueError, TypeError) as exc:
        raise PrepareError("%s: not a collection tarball (%s)" % (path, exc)) from exc
    if (info.get("namespace"), info.get("name")) != ("gpudirect", "gcp"):
        raise PrepareError("%s holds %s.%s, not gpudirect.gcp" % (path, info.get("namespace"), info.get("name")))
    return info.get("version")


def build_tarball(dest):
    """Builds the collection from the checkout into dest."""
    if not os.path.isfile(os.path.join(ROOT, "galaxy.yml")):
        raise PrepareError("no checkout to build the collection from (%s has no galaxy.yml): "
                           "give --tarball FILE or --git URL" % ROOT)
    scratch = tempfile.mkdtemp(prefix="gpudirect-ee-")
    try:
        result = subprocess.run([tool("ansible-galaxy"), "collection", "build", "--force", "--output-path", scratch, ROOT],
                                capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise PrepareError("ansible-galaxy collection build failed: %s" % (result.stderr.strip() or result.stdout.strip()))
        (built,) = [name for name in os.listdir(scratch) if name.endswith(".tar.gz")]
        shutil.move(os.path.join(scratch, built), dest)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def empty_out(out):
    if os.path.lexists(out):
        if os.path.isdir(out) and not os.path.islink(out) and (not os.listdir(out) or os.path.exists(os.path.join(out, MARKER))):
            shutil.rmtree(out)
        else:
            raise PrepareError("%s exists and was not written by prepare.py: give another OUT" % out)
    os.makedirs(out)
    with open(os.path.join(out, MARKER), "w", encoding="utf-8") as handle:
        handle.write("written by awx/ee/prepare.py; emptied on its next run\n")


def for_git(definition, requirements, url, ref):
    """The definition and requirements with the collection from url instead of the tarball."""
    entry = {"name": url, "type": "git"}
    if ref:
        entry["version"] = ref
    collections = [entry if c.get("type") == "file" else c for c in requirements["collections"]]
    definition = dict(definition)
    definition["additional_build_files"] = [
        f for f in definition.get("additional_build_files") or [] if f.get("dest") != "collections"]
    if not definition["additional_build_files"]:
        del definition["additional_build_files"]
    steps = dict(definition.get("additional_build_steps") or {})
    # ansible-galaxy clones with git, which a minimal base may lack;
    # PKGMGR is the package manager ansible-builder passes as a build arg
    steps["prepend_galaxy"] = list(steps.get("prepend_galaxy") or []) + [
        "RUN command -v git >/dev/null || { $PKGMGR install -y git-core && $PKGMGR clean all; }"]
    definition["additional_build_steps"] = steps
    return definition, {"collections": collections}


def write_yaml(path, data, source, url):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("---\n# awx/ee/%s with gpudirect.gcp from %s (written by prepare.py)\n" % (source, url))
        yaml.safe_dump(data, handle, default_flow_style=False, sort_keys=False)


def prepare(args):
    definition_name, requirements_name = BASES[args.base]
    out = os.path.abspath(args.out)
    if args.git is not None:
        check_git_url(args.git)
    elif args.ref:
        raise PrepareError("--ref goes with --git")
    if args.tarball:
        check_tarball(args.tarball)
    empty_out(out)
    if args.git is not None:
        with open(os.path.join(HERE, definition_name), encoding="utf-8") as handle:
            definition = yaml.safe_load(handle)
        with open(os.path.join(HERE, requirements_name), encoding="utf-8") as handle:
            requirements = yaml.safe_load(handle)
        definition, requirements = for_git(definition, requirements, args.git, args.ref)
        write_yaml(os.path.join(out, definition_name), definition, definition_name, args.git)
        write_yaml(os.path.join(out, requirements_name), requirements, requirements_name, args.git)
        source = args.git + ("@" + args.ref if args.ref else "")
    else:
        for name in (definition_name, requirements_name):
            shutil.copyfile(os.path.join(HERE, name), os.path.join(out, name))
        os.makedirs(os.path.join(out, "collections"))
        dest = os.path.join(out, TARBALL)
        if args.tarball:
            shutil.copyfile(args.tarball, dest)
        else:
            build_tarball(dest)
        source = "gpudirect.gcp %s (%s)" % (check_tarball(dest), TARBALL)
    print("prepare.py: %s in %s, from %s" % (definition_name, out, source))
    if args.create or args.build:
        argv = [tool("ansible-builder"), "build" if args.build else "create",
                "-f", os.path.join(out, definition_name), "-c", os.path.join(out, "context")]
        if args.build:
            argv += ["--container-runtime", args.container_runtime]
            # without --tag, the definition's options.tags name the image
            argv += ["-t", args.tag] if args.tag else []
        # ansible-builder's own messages say what failed; its status is ours
        return subprocess.call(argv)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="prepare.py", description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("out", metavar="OUT")
    parser.add_argument("--base", choices=sorted(BASES), default="aap",
                        help="aap: AAP 2.5 minimal EE, ansible-core 2.16 (default); community: community-ee-minimal; "
                             "de: the EDA controller's decision environment")
    parser.add_argument("--tarball", help="the collection tarball to install (default: built from the checkout)")
    parser.add_argument("--git", help="install the collection from this git URL instead of a tarball")
    parser.add_argument("--ref", default="", help="with --git: the branch, tag or commit")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--create", action="store_true", help="then write the build context (ansible-builder create)")
    action.add_argument("--build", action="store_true", help="then build the image (ansible-builder build)")
    parser.add_argument("--tag", help="with --build: the image's name (default: the definition's options.tags)")
    parser.add_argument("--container-runtime", default="podman", choices=("podman", "docker"))
    args = parser.parse_args(argv)
    try:
        if args.tarball and args.git is not None:
            raise PrepareError("--tarball and --git are two sources: give one")
        return prepare(args)
    except PrepareError as exc:
        sys.stderr.write("prepare.py: %s\n" % exc)
        return 2


if __name__ == "__main__":
    sys.exit(main())
