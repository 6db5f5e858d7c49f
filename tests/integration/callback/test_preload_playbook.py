# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real ansible-playbook run with the preload callback: the workers find the templates compiled,
and what each node gets is what it gets without the callback."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
HOSTS = ["n%d" % n for n in range(4)]

PLAYBOOK = textwrap.dedent("""\
    - name: Template on every node
      hosts: all
      gather_facts: false
      vars:
        label: "{{ inventory_hostname | upper }}-{{ base }}"
      tasks:
        - name: Set what the cache may serve and what it must not
          ansible.builtin.set_fact:
            picked: "{{ 1000000000 | random }}"
            derived: "{{ label }}"
            served: "{{ base | served_from_cache }}"
          when: base | int >= 0
        - name: Keep it
          ansible.builtin.copy:
            content: "{{ {'picked': picked, 'derived': derived, 'served': served | int} | to_json }}"
            dest: "{{ out }}/{{ inventory_hostname }}.json"
            mode: "0644"
    """)

# a filter of the test's own: how many compiles this worker took from the cache so far
FILTER = textwrap.dedent("""\
    from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core import jinja_cache


    class FilterModule(object):
        def filters(self):
            return {"served_from_cache": lambda _value: jinja_cache.hits()}
    """)


def _run(tmp_path, callbacks, cache="true"):
    out = tmp_path / ("out-%s-%s" % (callbacks or "none", cache))
    out.mkdir()
    (tmp_path / "filter_plugins").mkdir(exist_ok=True)
    (tmp_path / "filter_plugins" / "served.py").write_text(FILTER)
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    (tmp_path / "ansible.cfg").write_text("[defaults]\n")
    (tmp_path / "hosts.ini").write_text("".join(
        "%s ansible_connection=local ansible_python_interpreter=%s base=%d\n" % (host, sys.executable, index)
        for index, host in enumerate(HOSTS)))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "build", "collections"),
               ANSIBLE_CALLBACKS_ENABLED=callbacks, ANSIBLE_FILTER_PLUGINS=str(tmp_path / "filter_plugins"),
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1", ANSIBLE_CONFIG=str(tmp_path / "ansible.cfg"),
               GPUDIRECT_TEMPLATE_CACHE=cache,
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    if not callbacks:  # ansible-core 2.21 reads an empty list as one callback without a name
        del env["ANSIBLE_CALLBACKS_ENABLED"]
    proc = subprocess.run(["ansible-playbook", "-i", str(tmp_path / "hosts.ini"), str(tmp_path / "play.yml"),
                           "-e", "out=%s" % out, "-vvv"], env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return dict((host, json.loads((out / (host + ".json")).read_text())) for host in HOSTS), proc.stdout


@pytest.fixture(scope="module", autouse=True)
def linked():
    subprocess.run([os.path.join(ROOT, "scripts", "link-collection.sh")], check=True, capture_output=True)


def test_workers_take_the_compiled_templates_and_each_node_still_draws_its_own(tmp_path):
    from ansible_collections.gpudirect.gcp.plugins.callback import preload

    with_cache, said = _run(tmp_path, "gpudirect.gcp.preload")
    without, _said = _run(tmp_path, "")
    for host, index in zip(HOSTS, range(len(HOSTS))):
        assert with_cache[host]["derived"] == without[host]["derived"] == "%s-%d" % (host.upper(), index)
    # `1000000000 | random` is folded when compiled: served from one compile, every node would share it
    assert len(set(result["picked"] for result in with_cache.values())) == len(HOSTS)
    assert all(result["served"] == 0 for result in without.values())
    refused = "gpudirect.gcp.preload: templates compiled in each worker: "
    assert preload.Templar is not None  # every supported core is inside the cache's window
    # the conditional and both templates of the first task, the template of the second task's
    assert all(result["served"] >= 2 for result in with_cache.values())
    assert "templates compiled before the workers forked" in said and refused not in said


def test_switched_off_the_workers_compile_their_own_and_the_run_says_so_once(tmp_path):
    off, said = _run(tmp_path, "gpudirect.gcp.preload", cache="false")
    assert all(result["served"] == 0 for result in off.values())
    assert len(set(result["picked"] for result in off.values())) == len(HOSTS)
    assert said.count("gpudirect.gcp.preload: templates compiled in each worker: switched off") == 1
    assert "templates compiled before the workers forked" not in said
