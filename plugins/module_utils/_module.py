# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A thin wrapper over AnsibleModule shared by the collection's modules.

It keeps the modules short: one place that builds the AnsibleModule, runs
commands as argument lists and turns bad input into one clear line.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import threading

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import (
    destination_problem, mode_of, read_own, write_atomic)


# what run() returns for a command it gave up on (the status timeout(1) gives)
TIMED_OUT = 124
# how long a killed command may take to end before it is left behind
KILL_GRACE_S = 2.0


class ModuleInputError(ValueError):
    """Bad input or node state that must be reported as one line, not a traceback."""


class GpuModule(object):
    """AnsibleModule plus the few helpers every gpudirect.gcp module needs."""

    def __init__(self, argument_spec, supports_check_mode=True, **kwargs):
        self.module = AnsibleModule(argument_spec=argument_spec,
                                    supports_check_mode=supports_check_mode, **kwargs)
        self.params = self.module.params
        self.check_mode = self.module.check_mode
        self.diff_mode = self.module._diff
        self.warnings = []

    def warn(self, message):
        self.warnings.append(message)
        self.module.warn(message)

    def run(self, argv, check_rc=False, timeout=None):
        """Run a command given as an argument list; never through a shell.

        With timeout (seconds), a command still running then is killed and (rc, out, err) is TIMED_OUT, what
        it printed, and a line that says so. One that a kill cannot end (nvidia-smi asleep in the driver of a
        sick GPU ends only when the driver lets it) is left behind: run_command would wait for it for ever."""
        if not isinstance(argv, (list, tuple)):
            raise TypeError("commands are argument lists")
        if timeout is None:
            return self.module.run_command(list(argv), check_rc=check_rc)
        started, box = [], {}

        def work():
            try:
                box["result"] = self.module.run_command(list(argv), before_communicate_callback=started.append,
                                                        handle_exceptions=False)
            except Exception as exc:  # pylint: disable=broad-except
                box["error"] = exc

        worker = threading.Thread(target=work)
        worker.daemon = True
        worker.start()
        worker.join(timeout)
        name = os.path.basename(str(argv[0]))
        if worker.is_alive():
            for proc in started:
                try:
                    proc.kill()
                except OSError:
                    pass
            worker.join(KILL_GRACE_S)
            ended = box.get("result")
            rc, out, err = TIMED_OUT, ended[1] if ended else "", "%s did not finish within %gs%s" % (
                name, timeout, ": killed" if ended else " and could not be killed: left behind")
        elif "error" in box:
            exc = box["error"]
            self.module.fail_json(msg=to_native(exc), rc=getattr(exc, "errno", None) or 257,
                                  cmd=" ".join(str(a) for a in argv))
        else:
            rc, out, err = box["result"]
        if check_rc and rc != 0:
            self.module.fail_json(msg=(err or out or "").rstrip() or "rc %d" % rc, rc=rc, stdout=out, stderr=err,
                                  cmd=" ".join(str(a) for a in argv))
        return rc, out, err

    def which(self, name, required=False):
        """The path of an executable on PATH, or None (with required, the module fails naming it)."""
        return self.module.get_bin_path(name, required=required)

    def executable(self, name):
        """An absolute path as given, else the executable found on PATH (the module fails naming it)."""
        return name if os.path.isabs(name) else self.which(name, required=True)

    def jsonify(self, data):
        return self.module.jsonify(data)

    @staticmethod
    def diff(before, after, path):
        """The result's diff for a file at path: before and after as text ("" when absent)."""
        return dict(before=before or "", after=after or "", before_header=path, after_header=path)

    def write_file(self, path, text, mode, dir_mode=0o755):
        """write_atomic, with the error returned as one line naming the path (None on success).
        """
        try:
            write_atomic(path, text, mode, dir_mode)
        except (IOError, OSError) as exc:
            return "cannot write %s: %s" % (path, exc)
        return None

    def put_file(self, what, option, path, text, mode):
        """Make the file at path hold text with mode, in check mode only saying whether it would.

        The result's changed and diff; before is the file's own content, never that of a file a
        symbolic link at path points at (the write replaces the link).  A path that cannot take a
        file fails the module in one line: "<what>: <option> <path> is a directory ...".
        """
        problem = destination_problem(option, path)
        if problem:
            self.fail("%s: %s" % (what, problem))
        before = read_own(path)
        changed = before != text or mode_of(path) != mode
        result = dict(changed=changed)
        if changed:
            result["diff"] = self.diff(before, text, path)
        if changed and not self.check_mode:
            error = self.write_file(path, text, mode)
            if error:
                self.fail("%s: %s" % (what, error))
        return result

    def fail(self, msg, **result):
        self.module.fail_json(msg=msg, **result)

    def exit(self, **result):
        self.module.exit_json(**result)
