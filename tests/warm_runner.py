"""The warm runner's process: `import anthropic` once, then fork one fresh run per job.

Started by tests/runner.py as `python tests/warm_runner.py`; it reads one job (JSON) per line on
stdin. For each it forks a monitor, which forks the run, reports {"id", "pid"} at once and
{"id", "returncode"} (as subprocess would give it) when the run ends. Runs go on side by side.
A script is compiled once per content, before the fork, and each run executes that code as
runpy.run_path would (which compiles the file every time: 20 ms for s06's code.py).
Importing this module does nothing: it works only as a script.
"""

import io
import json
import os
import runpy
import signal
import sys
import tempfile
import traceback
import types

_compiled = {}  # (script, source) -> code object


def compiled(script):
    """The script's code, compiled once per content; None for a relative path (read from the
    run's own folder) or a file that cannot be read or compiled: the run then goes through
    runpy, which fails as `python SCRIPT` would."""
    if not os.path.isabs(script):
        return None
    try:
        with open(script, "rb") as file:
            source = file.read()
        key = (script, source)
        if key not in _compiled:
            _compiled[key] = compile(source, script, "exec", dont_inherit=True)
        return _compiled[key]
    except (OSError, SyntaxError, ValueError):
        return None


def run(job, code):
    """Become `python SCRIPT ARGS` with the job's cwd, environment and files."""
    os.setsid()  # its own process group, so a run that hangs can be stopped whole
    # Ctrl-C as in a terminal, even when the tests run where SIGINT is ignored (in the background)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    tempfile.tempdir = None  # follow the job's TMPDIR
    writing = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    files = ((0, "stdin", os.O_RDONLY), (1, "stdout", writing), (2, "stderr", writing))
    for fd, name, flags in files:
        opened = os.open(job[name], flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True
    )
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", write_through=True)
    sys.argv = [job["script"], *job["args"]]
    sys.path[0] = os.path.dirname(job["script"])
    try:
        if code is None:
            runpy.run_path(job["script"], run_name="__main__")
        else:  # as runpy.run_path runs a script, without compiling it again
            main = types.ModuleType("__main__")
            main.__dict__.update(__file__=job["script"], __cached__=None, __loader__=None,
                                 __package__="", __spec__=None)
            sys.modules["__main__"] = main
            exec(code, main.__dict__)
        return 0
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def main():
    import anthropic  # noqa: F401  (the slow import, paid once: every run starts with it done)

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps finished monitors
    report = sys.stdout.buffer
    for line in sys.stdin:
        job = json.loads(line)
        code = compiled(job["script"])
        if os.fork() == 0:  # the monitor
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            pid = os.fork()
            if pid == 0:
                status = 1
                try:
                    status = run(job, code)
                finally:
                    os._exit(status)
            report.write((json.dumps({"id": job["id"], "pid": pid}) + "\n").encode())
            report.flush()
            _, status = os.waitpid(pid, 0)
            ended = {"id": job["id"], "returncode": os.waitstatus_to_exitcode(status)}
            report.write((json.dumps(ended) + "\n").encode())
            report.flush()
            os._exit(0)


if __name__ == "__main__":
    main()
