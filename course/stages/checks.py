"""The checks of each stage: a scripted exchange, then what the program must have done.

Each exchange is small enough to read: the Messages the loopback API answers with, in order,
the lines typed on stdin, the files the workdir starts with. The checks that follow it judge
the requests the program sent, the files it left, and (where a check is about it) what it
printed. Each stage's contract is its lesson's section "Build it yourself"; every rule it
states has a check, and a program that breaks the rule fails that check
(tests/stage_programs/mistakes.py holds one such program per check).

Each stage's exchanges and checks are a module of their own, course/stages/s01.py to s09.py,
written with course/stages/common.py; this one imports them in the order of the stages. A new
stage adds its module to the import below.

`<<name>>` is a value drawn for each run (course.stages.Draw): a word such as notes-qwerty, a
number (`<<n_...>>`), a tool_use id (`use("a", ...)` gets `<<id_a>>`). A judge names a call
by its key ("a") and fills `<<name>>`s with `run.v(...)`.

The answers on stdin: from s03 on, a program asks before a command that may change things,
so the exchanges of s01 and s02 type `y` enough times; a program that does not ask never
reads them. The cases of "read-only" are ones nobody disputes: `ls` and `cat FILE` inside the
workdir read; `touch`, `rm`, a redirection and any chain that holds one of them change.
"""

# each module registers its checks, in the order of the stages
from course.stages import (  # noqa: F401
    s01,
    s02,
    s03,
    s04,
    s05,
    s06,
    s07,
    s08,
    s09,
    s10,
    s11,
)
from course.stages.common import CHECKS

__all__ = ["CHECKS"]
