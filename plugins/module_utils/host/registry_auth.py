# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The container engine's credential-helper settings (the `credHelpers` of ~/.docker/config.json).

docker reads them; podman reads them too when its own auth file has no entry
for the registry.  A helper entry maps a registry host to the suffix of a
`docker-credential-<suffix>` program, so no secret is ever written here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json


class ConfigError(ValueError):
    """The existing config file cannot be read as the engine's JSON config."""


def parse(text, path):
    if not (text or "").strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError("%s is not valid JSON (%s); fix or remove it" % (path, exc))
    if not isinstance(data, dict):
        raise ConfigError("%s holds %s, not a JSON object" % (path, type(data).__name__))
    helpers = data.get("credHelpers", {})
    if not isinstance(helpers, dict):
        raise ConfigError("%s: credHelpers is %s, not an object" % (path, type(helpers).__name__))
    return data


def apply(config, registries, helper, state="present"):
    """A copy of config with the registries' helper set (present) or removed (absent, only where it is ours)."""
    out = copy.deepcopy(config)
    helpers = dict(out.get("credHelpers") or {})
    for registry in registries:
        if state == "present":
            helpers[registry] = helper
        elif helpers.get(registry) == helper:
            del helpers[registry]
    if helpers:
        out["credHelpers"] = helpers
    else:
        out.pop("credHelpers", None)
    return out


def dump(config):
    return json.dumps(config, indent=2, sort_keys=True) + "\n"


def redacted(config):
    """The config for a diff: stored credentials shown as a placeholder, never their value."""
    out = copy.deepcopy(config)
    for entry in (out.get("auths") or {}).values():
        if isinstance(entry, dict):
            for key in ("auth", "password", "identitytoken", "registrytoken"):
                if key in entry:
                    entry[key] = "<redacted>"
    return out
