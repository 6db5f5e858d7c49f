# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/sandbox/ee/ee_inputs.py: what scripts/build-ee.sh puts into the
sandbox's execution environment (galaxy.yml's dependencies from the controller,
the shipped definition with the sandbox's stand-ins merged over it) and the hash
that decides whether the image is rebuilt."""

import io
import json
import os
import subprocess
import sys
import tarfile

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(ROOT, "tests", "sandbox", "ee", "ee_inputs.py")
SHIPPED = os.path.join(ROOT, "awx", "ee", "execution-environment.yml")
OVERRIDES = os.path.join(ROOT, "tests", "sandbox", "ee", "overrides.yml")
sys.path.insert(0, os.path.dirname(SCRIPT))

import ee_inputs  # noqa: E402


def write_tarball(path, files_json, mtime):
    """A collection tarball as ansible-galaxy writes one: MANIFEST.json, FILES.json, files."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (("MANIFEST.json", b'{"collection_info": {"version": "1.0.0"}}'),
                           ("FILES.json", files_json), ("README.md", b"readme")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = mtime
            tar.addfile(info, io.BytesIO(data))


def installed(root, name, version):
    """An installed collection (MANIFEST.json and one plugin) under root/ns/name."""
    path = os.path.join(str(root), *name.split("."))
    os.makedirs(os.path.join(path, "plugins", "__pycache__"))
    with open(os.path.join(path, "MANIFEST.json"), "w") as handle:
        json.dump({"collection_info": {"version": version}}, handle)
    with open(os.path.join(path, "plugins", "__pycache__", "x.pyc"), "w") as handle:
        handle.write("cache")
    return path


def galaxy(tmp_path, deps):
    path = tmp_path / "galaxy.yml"
    path.write_text(yaml.safe_dump({"namespace": "gpudirect", "name": "gcp", "version": "1.0.0",
                                    "dependencies": deps}))
    return str(path)


def test_digest_ignores_timestamps_but_not_content(tmp_path):
    # build-ee.sh names the tarball gpudirect-gcp.tar.gz every time: same name here
    first, second, other = (str(tmp_path / d / "gpudirect-gcp.tar.gz") for d in ("a", "b", "c"))
    for path in (first, second, other):
        os.makedirs(os.path.dirname(path))
    write_tarball(first, b'{"files": ["x 1"]}', mtime=1000)
    write_tarball(second, b'{"files": ["x 1"]}', mtime=2000)
    write_tarball(other, b'{"files": ["x 2"]}', mtime=1000)
    with open(first, "rb") as one, open(second, "rb") as two:
        assert one.read() != two.read()
    assert len(ee_inputs.digest([first])) == 64
    assert ee_inputs.digest([first]) == ee_inputs.digest([second])
    assert ee_inputs.digest([first]) != ee_inputs.digest([other])


def test_digest_counts_plain_files_by_bytes(tmp_path):
    path = tmp_path / "base-image-id"
    path.write_text("sha256:aaa\n")
    before = ee_inputs.digest([str(path)])
    path.write_text("sha256:bbb\n")
    assert ee_inputs.digest([str(path)]) != before


def test_digest_names_a_broken_tarball(tmp_path):
    path = tmp_path / "gpudirect-gcp.tar.gz"
    path.write_bytes(b"not a tarball")
    with pytest.raises(ee_inputs.InputError, match="gpudirect-gcp.tar.gz: not a collection tarball"):
        ee_inputs.digest([str(path)])


def test_dependencies_are_copied_from_the_controller_without_caches(tmp_path):
    roots = [str(tmp_path / "empty"), str(tmp_path / "venv")]
    installed(roots[1], "ansible.posix", "2.1.0")
    installed(roots[1], "community.general", "11.4.2")
    installed(roots[1], "community.docker", "4.0.0")
    dest = tmp_path / "deps"
    copied = ee_inputs.copy_dependencies(
        galaxy(tmp_path, {"ansible.posix": ">=1.5.0", "community.general": "*"}), str(dest), roots)
    assert [(n, v) for n, v, _p in copied] == [("ansible.posix", "2.1.0"), ("community.general", "11.4.2")]
    assert sorted(os.listdir(str(dest / "ansible_collections"))) == ["ansible", "community"]
    assert os.listdir(str(dest / "ansible_collections" / "community")) == ["general"]
    assert (dest / "ansible_collections" / "ansible" / "posix" / "MANIFEST.json").is_file()
    assert not (dest / "ansible_collections" / "ansible" / "posix" / "plugins" / "__pycache__").exists()


def test_no_dependencies_leave_an_empty_collection_tree(tmp_path):
    dest = tmp_path / "deps"
    (dest / "ansible_collections" / "old" / "gone").mkdir(parents=True)
    assert ee_inputs.copy_dependencies(galaxy(tmp_path, {}), str(dest), []) == []
    assert os.listdir(str(dest / "ansible_collections")) == []


@pytest.mark.parametrize("deps, roots_have, message", [
    ({"community.general": ">=12.0.0"}, "11.4.2", "community.general >=12.0.0 wanted, the controller has 11.4.2"),
    ({"ansible.utils": "*"}, "11.4.2", "dependency ansible.utils is not installed on the controller"),
    ({"general": "*"}, "11.4.2", "dependency 'general' is not a namespace.name"),
    (["community.general"], "11.4.2", "dependencies must be a mapping"),
])
def test_an_unusable_dependency_is_named(tmp_path, deps, roots_have, message):
    root = str(tmp_path / "venv")
    installed(root, "community.general", roots_have)
    with pytest.raises(ee_inputs.InputError, match=message):
        ee_inputs.copy_dependencies(galaxy(tmp_path, deps), str(tmp_path / "deps"), [root])


def test_the_command_line_says_one_line_and_no_traceback(tmp_path):
    result = subprocess.run([sys.executable, SCRIPT, "deps", str(tmp_path / "missing.yml"), str(tmp_path / "d")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("ee_inputs: ") and "missing.yml: cannot be read" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_controller_has_every_collection_galaxy_yml_declares(tmp_path):
    # what the EE build will copy; a dependency added to galaxy.yml that the
    # controller's ansible package lacks or has at the wrong version fails here
    copied = ee_inputs.copy_dependencies(os.path.join(ROOT, "galaxy.yml"), str(tmp_path / "deps"),
                                         ee_inputs.controller_roots())
    with open(os.path.join(ROOT, "galaxy.yml")) as handle:
        declared = yaml.safe_load(handle).get("dependencies") or {}
    assert sorted(n for n, _v, _p in copied) == sorted(declared)


def test_overrides_merge_key_by_key_replace_the_rest_and_null_removes():
    base = {"a": {"b": 1, "c": [1, 2], "d": {"e": 1}}, "f": "keep", "g": "gone"}
    over = {"a": {"c": [3], "d": {"x": 2}}, "g": None, "h": {"i": 1}}
    want = {"a": {"b": 1, "c": [3], "d": {"e": 1, "x": 2}}, "f": "keep", "h": {"i": 1}}
    assert ee_inputs.merged(base, over) == want
    assert base["a"]["d"] == {"e": 1}


def test_the_sandbox_definition_is_the_shipped_one_on_the_stand_in_base(tmp_path):
    out = str(tmp_path / "execution-environment.yml")
    ee = ee_inputs.write_definition(SHIPPED, OVERRIDES, out)
    with open(SHIPPED) as handle:
        shipped = yaml.safe_load(handle)
    with open(out) as handle:
        assert yaml.safe_load(handle) == ee
    # the base is substituted; the published one is what users get
    assert shipped["images"]["base_image"]["name"].startswith("registry.redhat.io/")
    assert ee["images"]["base_image"]["name"] == "localhost/gpudirect-ee-base:latest"
    # what decides the image's content beyond the stand-ins stays the shipped one
    assert ee["dependencies"]["exclude"] == shipped["dependencies"]["exclude"]
    assert "python" not in ee["dependencies"] and "system" not in ee["dependencies"]
    # Galaxy cannot be reached from the build: the tarball and the controller's copies
    opts = ee["build_arg_defaults"]["ANSIBLE_GALAXY_CLI_COLLECTION_OPTS"].split()
    assert "--no-deps" in opts and "--offline" in opts
    assert {"src": "context/deps", "dest": "deps"} in ee["additional_build_files"]
    assert any("/build/deps/ansible_collections/" in step for step in ee["additional_build_steps"]["append_galaxy"])
    assert all(c.get("type") == "file" for c in ee["dependencies"]["galaxy"]["collections"])


@pytest.mark.parametrize("content, message", [
    ("- a list\n", "overrides.yml: not a mapping"),
    ("a: [\n", "overrides.yml: cannot be read"),
])
def test_a_broken_overrides_file_is_named(tmp_path, content, message):
    path = tmp_path / "overrides.yml"
    path.write_text(content)
    with pytest.raises(ee_inputs.InputError, match=message):
        ee_inputs.write_definition(SHIPPED, str(path), str(tmp_path / "out.yml"))
