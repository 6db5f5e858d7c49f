"""Stand-in images: build every tests/sandbox/standins/<name>/ that has a
Containerfile and a standin.yml, and push it to the local registry under each
real image path and tag it stands in for.

standin.yml: {images: [<real path without tag>], tags: [...], build_args: {...}}, or
{variants: [{name, images, tags, build_args}, ...]} for one directory built
several ways (the plugin installer stand-in is TCPX-shaped or TCPXO-shaped).
Builds are cached: an image is rebuilt only when its directory or the base
image changes, and pushed again only when the registry lacks it.
"""

import hashlib
import json
import os

from . import common, images, registry

STANDINS = os.path.join(common.SANDBOX_DIR, "standins")
LOCAL_REPO = "localhost/gpudirect-standin"
REAL_REGISTRY = "us-docker.pkg.dev/"
PUSHED = os.path.join(registry.STORAGE, "pushed.json")


def _load_yaml(path):
    """[{images, tags, build_args, variant}] of one standin.yml."""
    try:
        import yaml
    except ImportError:
        raise common.SandboxError("PyYAML is needed to read %s (run the sandbox with .venv/bin/python)" % path)
    try:
        with open(path) as fh:
            data = yaml.safe_load(fh) or {}
    except yaml.YAMLError as exc:
        raise common.SandboxError("%s is not valid YAML: %s" % (path, str(exc).splitlines()[0]))
    if not isinstance(data, dict):
        raise common.SandboxError("%s: expected a mapping with images and tags" % path)
    if "variants" not in data:
        return [dict(_spec(path, data), variant="")]
    variants = data["variants"]
    if not isinstance(variants, list) or not variants:
        raise common.SandboxError("%s: variants must be a non-empty list" % path)
    out = []
    for variant in variants:
        if not isinstance(variant, dict) or not variant.get("name"):
            raise common.SandboxError("%s: each variant needs a name, images and tags" % path)
        out.append(dict(_spec(path, variant), variant=str(variant["name"])))
    return out


def _spec(path, data):
    imgs, tags, args = data.get("images"), data.get("tags"), data.get("build_args") or {}
    if not imgs or not isinstance(imgs, list) or not all(isinstance(i, str) for i in imgs):
        raise common.SandboxError("%s: images must be a non-empty list of image paths" % path)
    if not tags or not isinstance(tags, list):
        raise common.SandboxError("%s: tags must be a non-empty list" % path)
    if not isinstance(args, dict):
        raise common.SandboxError("%s: build_args must be a mapping" % path)
    for img in imgs:
        if not img.startswith(REAL_REGISTRY) or ":" in img.rsplit("/", 1)[-1]:
            raise common.SandboxError("%s: image %r must be a %s... path without a tag" % (path, img, REAL_REGISTRY))
    return {"images": imgs, "tags": [str(t) for t in tags], "build_args": dict((str(k), str(v)) for k, v in args.items())}


def discover():
    out = []
    if not os.path.isdir(STANDINS):
        return out
    for name in sorted(os.listdir(STANDINS)):
        d = os.path.join(STANDINS, name)
        if os.path.isfile(os.path.join(d, "Containerfile")) and os.path.isfile(os.path.join(d, "standin.yml")):
            for spec in _load_yaml(os.path.join(d, "standin.yml")):
                spec.update({"name": name + ("-" + spec["variant"] if spec["variant"] else ""), "dir": d})
                out.append(spec)
    return out


def _hash(spec, base_id):
    digest = hashlib.sha256(base_id.encode())
    digest.update(json.dumps(spec["build_args"], sort_keys=True).encode())
    images._hash_tree(digest, spec["dir"])  # pylint: disable=protected-access
    return digest.hexdigest()[:16]


def build(spec, base_id):
    tag = _hash(spec, base_id)
    ref = "%s-%s:%s" % (LOCAL_REPO, spec["name"].replace("_", "-"), tag)
    if not images.image_exists(ref):
        common.log("building stand-in %s" % spec["name"])
        argv = ["build", "--pull=never", "--network=host", "--layers=false", "-t", ref,
                "-f", os.path.join(spec["dir"], "Containerfile"), "--label", "%s=standin" % common.LABEL]
        for key, value in sorted(spec["build_args"].items()):
            argv += ["--build-arg", "%s=%s" % (key, value)]
        common.podman(*(argv + [spec["dir"]]), what="building stand-in %s" % spec["name"], timeout=900)
    return ref, tag


def _load_pushed():
    try:
        with open(PUSHED) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def _in_registry(target):
    repo, tag = target.split("/", 1)[1].rsplit(":", 1)
    path = os.path.join(registry.STORAGE, "docker", "registry", "v2", "repositories", repo,
                        "_manifests", "tags", tag, "current", "link")
    return os.path.exists(path)


def publish():
    """Build the base image and every stand-in, push what the registry lacks; return the pushed names."""
    specs = discover()
    base = images.base_image()
    base_id = common.podman("image", "inspect", "--format", "{{.Id}}", base).stdout.decode().strip()
    addr = registry.host_address()
    done = []
    with common.locked("standins"):
        pushed = _load_pushed()
        for spec in specs:
            ref, tag = build(spec, base_id)
            for img in spec["images"]:
                for t in spec["tags"]:
                    real = "%s:%s" % (img, t)
                    target = "%s/%s" % (addr, real[len(REAL_REGISTRY):])
                    if pushed.get(real) == tag and _in_registry(target):
                        continue
                    common.podman("push", "--tls-verify=false", "--quiet", ref, target,
                                  what="pushing %s" % real, timeout=600)
                    pushed[real] = tag
                    done.append(real)
        os.makedirs(os.path.dirname(PUSHED), exist_ok=True)
        with open(PUSHED, "w") as fh:
            json.dump(pushed, fh, indent=2, sort_keys=True)
    if done:
        common.log("pushed %d stand-in image name(s) to %s" % (len(done), addr))
    return specs
