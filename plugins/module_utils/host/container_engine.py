# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node's container engine (docker or podman): finding it and building argument lists.

Every command here is an argument list; nothing is pasted into a shell.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

ENGINES = ("docker", "podman")


class EngineError(Exception):
    """The container engine is missing or answered something unusable."""


def find_engine(get_bin_path, run_command, preference="auto"):
    """Locate the engine binary.

    get_bin_path(name) -> path or None; run_command(argv) -> (rc, out, err).
    preference: "auto" (docker first, as Google's images ship docker), "docker" or "podman".
    Returns a dict: name, path, podman (True when the binary is podman, also when
    `docker` is podman's compatibility command), version, daemon_unit (the systemd
    unit a service wrapping the engine must start after, or None).
    """
    if preference not in ("auto",) + ENGINES:
        raise EngineError("container engine %r is not supported; use auto, docker or podman" % (preference,))
    candidates = ENGINES if preference == "auto" else (preference,)
    for name in candidates:
        path = get_bin_path(name)
        if not path:
            continue
        rc, out, err = run_command([path, "--version"])
        if rc != 0:
            raise EngineError("%s --version failed (rc=%d): %s" % (path, rc, (err or out).strip()))
        version = (out or err).strip().splitlines()[0] if (out or err).strip() else ""
        is_podman = "podman" in (out + err).lower()
        return {
            "name": name,
            "path": path,
            "podman": is_podman,
            "version": version,
            # podman has no daemon; a real docker CLI needs dockerd up first
            "daemon_unit": None if is_podman else "docker.service",
        }
    raise EngineError("no container engine found on the node (looked for %s in PATH)" % ", ".join(candidates))


def image_ref(image, tag, digest=None):
    """image:tag, or image@digest when a digest pins it (the digest wins over the tag)."""
    if digest:
        if not digest.startswith("sha256:"):
            raise EngineError("image digest %r must look like sha256:<64 hex digits>" % (digest,))
        return "%s@%s" % (image, digest)
    if not tag:
        raise EngineError("image %s has no tag; pin one" % (image,))
    return "%s:%s" % (image, tag)


def pull_argv(engine, ref):
    return [engine, "pull", ref]


def image_digest_argv(engine, ref):
    return [engine, "image", "inspect", "--format", "{{json .RepoDigests}}", ref]


def parse_repo_digest(out, image):
    """Pick the sha256 digest for `image` out of `image inspect` RepoDigests JSON."""
    import json

    try:
        digests = json.loads(out.strip() or "[]") or []
    except ValueError:
        return None
    fallback = None
    for entry in digests:
        repo, _sep, digest = entry.partition("@")
        if not digest:
            continue
        if repo == image:
            return digest
        fallback = fallback or digest
    return fallback


def remove_argv(engine, name):
    return [engine, "rm", "--force", name]


def installer_argv(engine, name, ref, volumes, args, network_host=True):
    """`<engine> run --rm --name NAME --network=host -v H:C ... REF ARGS` (the installer's documented form)."""
    argv = [engine, "run", "--rm", "--name", name]
    if network_host:
        argv.append("--network=host")
    for host in sorted(volumes):
        argv.extend(["-v", "%s:%s" % (host, volumes[host])])
    argv.append(ref)
    argv.extend(args)
    return argv


def inspect_state_argv(engine, name):
    return [engine, "inspect", "--format", "{{.State.Running}} {{.Id}} {{.State.StartedAt}}", name]


def parse_state(out):
    """'true <id> <started>' -> (running, id, started) or (False, None, None)."""
    parts = out.strip().split(None, 2)
    if len(parts) < 2:
        return False, None, None
    return parts[0].lower() == "true", parts[1], parts[2] if len(parts) > 2 else None


def image_argv(engine, name):
    """The image reference a container was created from (docker and podman both keep .Config.Image)."""
    return [engine, "inspect", "--format", "{{.Config.Image}}", name]


def copy_out_argv(engine, name, path, dest):
    """`<engine> cp NAME:PATH DEST`: reads a file of a running container without running anything in it."""
    return [engine, "cp", "%s:%s" % (name, path), dest]


def logs_argv(engine, name, tail=None):
    argv = [engine, "logs"]
    if tail:
        argv.extend(["--tail", str(tail)])
    argv.append(name)
    return argv
