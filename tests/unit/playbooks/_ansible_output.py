# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ansible-playbook's output read the same on every supported ansible-core. Before 2.19 a warning is
wrapped at 79 columns when the output is no terminal, and a failed task's message appears only inside
its JSON result (quotes escaped); 2.19 and newer print each warning on one line and repeat the message
in an [ERROR] line. text() gives one line per warning and the messages' quotes unescaped."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_NEW_ENTRY = re.compile(r"^(\[|TASK |PLAY |RUNNING |ok:|changed:|fatal:|failed:|skipping:|included:|\S+\s+: ok=)")


def text(out):
    lines = []
    in_warning = False
    for line in out.splitlines():
        if in_warning and line.strip() and not _NEW_ENTRY.match(line):
            lines[-1] += " " + line.strip()
            continue
        in_warning = line.startswith(("[WARNING]:", "[DEPRECATION WARNING]:"))
        lines.append(line)
    return "\n".join(lines).replace('\\"', '"')
