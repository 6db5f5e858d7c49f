# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RxDM image and container in the node's engine (docker or podman): read, pull, remove.

Both engines answer the same argument lists here, so one module serves either;
every command is an argument list.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class RxdmEngineError(Exception):
    """The engine refused a pull or a removal; the message is one line."""


def _tail(text, lines=3):
    return " ".join((text or "").strip().splitlines()[-lines:])


def image_id(run, engine, ref):
    """The local image ID of ref, or None when the engine does not have it."""
    rc, out, _err = run([engine, "image", "inspect", "--format", "{{.Id}}", ref])
    if rc != 0:
        return None
    # an engine that answers rc 0 without an ID still has the image
    return out.strip() or ref


def pull(run, engine, ref):
    rc, out, err = run([engine, "pull", ref])
    if rc != 0:
        raise RxdmEngineError("pulling %s failed (rc=%d): %s" % (ref, rc, _tail(err or out)))


def container_id(run, engine, name):
    """The ID of the container called name, or None when there is none."""
    rc, out, _err = run([engine, "container", "inspect", "--format", "{{.Id}}", name])
    if rc != 0:
        return None
    return out.strip() or name


def remove_container(run, engine, name):
    rc, out, err = run([engine, "rm", "--force", name])
    if rc != 0:
        raise RxdmEngineError("removing container %s failed (rc=%d): %s" % (name, rc, _tail(err or out)))
