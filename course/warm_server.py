"""The warm runner's process: `import anthropic` once, then fork one fresh run per job.

Started by course/warm.py as `python course/warm_server.py`; it reads one job (JSON) per line
on stdin. For each it forks the run, reports {"id", "pid"} at once and {"id", "returncode"} (as
subprocess would give it) when the run ends. Runs go on side by side.
A script is compiled once per content, before the fork, and each run executes that code as
runpy.run_path would (which compiles the file every time: 20 ms for s06's code.py).
Importing this module does nothing: it works only as a script. It needs only the standard
library: where anthropic is not installed, the runs start without it, as `python` would.
"""

import atexit
import contextlib
import gc
import importlib
import io
import json
import os
import runpy
import select
import signal
import sys
import tempfile
import threading
import types
import warnings

# Imported before the fork, as anthropic is: every chapter imports them (argparse at start,
# dotenv in main()), and each costs a run 2-3 ms (argparse with gettext; dotenv compiles its
# regular expressions). Not readline, which every chapter imports too: importing it sets
# readline up for the terminal and the inputrc of the environment of the moment, which must be
# the run's.
PREIMPORTED = ("argparse", "dotenv")

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


def streams(env):
    """sys.stdin, sys.stdout and sys.stderr on fds 0, 1 and 2, as `python` makes them for files:
    the encoding (and errors) of PYTHONIOENCODING, else the runner's own; stdout block-buffered
    and stderr line-buffered, or both unbuffered under PYTHONUNBUFFERED."""
    given, _, errors = env.get("PYTHONIOENCODING", "").partition(":")
    encoding = given or sys.__stdout__.encoding
    errors = errors or ("strict" if given else sys.__stdout__.errors)
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))

    def writer(fd, errors, line_buffering):
        raw = io.FileIO(fd, "w", closefd=False)
        return io.TextIOWrapper(raw if unbuffered else io.BufferedWriter(raw), encoding=encoding,
                                errors=errors, line_buffering=line_buffering and not unbuffered,
                                write_through=unbuffered)

    reader = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)),
                              encoding=encoding, errors=errors)
    return reader, writer(1, errors, False), writer(2, "backslashreplace", True)


def run(job, code):
    """Become `python SCRIPT ARGS` with the job's cwd, environment and files, and end as it
    would: the exit status of SystemExit or of an uncaught exception (its traceback through
    sys.excepthook), after the threads it left have ended and its atexit functions have run."""
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
    sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__ = (
        streams(job["env"]))
    sys.argv = [job["script"], *job["args"]]
    sys.path[0] = os.path.dirname(job["script"])
    status, interrupted = 0, False
    try:
        if code is None:
            runpy.run_path(job["script"], run_name="__main__")
        else:  # as runpy.run_path runs a script, without compiling it again
            main = types.ModuleType("__main__")
            main.__dict__.update(__file__=job["script"], __cached__=None, __loader__=None,
                                 __package__="", __spec__=None)
            sys.modules["__main__"] = main
            exec(code, main.__dict__)
    except SystemExit as stop:
        status = exit_status(stop)
    except BaseException as error:
        error.with_traceback(own_frames(error.__traceback__, job["script"]))
        sys.excepthook(type(error), error, error.__traceback__)
        status, interrupted = 1, isinstance(error, KeyboardInterrupt)
    try:
        threading._shutdown()  # as the interpreter does at exit: wait for the non-daemon threads
        atexit._run_exitfuncs()
    except SystemExit as stop:
        status = exit_status(stop)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            status = 120 if status == 0 else status  # python's status when stdout fails
    if interrupted:  # as python ends after an uncaught KeyboardInterrupt: killed by SIGINT
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return status


def own_frames(trace, script):
    """The traceback from the script's first frame on, as `python SCRIPT` prints it (without
    this module's and runpy's frames; none at all for a script that does not compile)."""
    while trace is not None and trace.tb_frame.f_code.co_filename != script:
        trace = trace.tb_next
    return trace


def exit_status(stop):
    if stop.code is None or isinstance(stop.code, int):
        return stop.code or 0
    print(stop.code, file=sys.stderr)
    return 1


def report(line):
    """Tell the caller; if it has gone (it stopped, or was stopped), there is nobody to tell."""
    try:
        sys.stdout.buffer.write((json.dumps(line) + "\n").encode())
        sys.stdout.buffer.flush()
    except OSError:
        pass


def share_ssl_context(httpcore2):
    """A client makes an SSL context and loads the machine's CA bundle into it (40 ms of CPU,
    as much again as the rest of a short run): make it here, once, for every run to share. A
    run whose SSL_CERT_FILE or SSL_CERT_DIR differs from this process's makes its own (once)."""
    original = httpcore2.default_ssl_context
    made = {}

    def default_ssl_context(*, _trust_env=True):
        key = (_trust_env, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
        if key not in made:
            made[key] = original(_trust_env=_trust_env)
        return made[key]

    httpcore2.default_ssl_context = default_ssl_context


def warm_up(anthropic):
    """Make a client, and send two requests through it to a stand-in transport (no network), one
    answered, one refused with an API error: the modules a client loads and the validators the
    SDK builds on first use are then loaded and built in every run, as caches, and the SSL
    context is made (share_ssl_context). Nothing else is kept; on an SDK of another shape,
    nothing."""
    try:
        warnings.simplefilter("ignore")  # what it may warn of is for a run to say, not for this
        anthropic.Anthropic(api_key="not-a-key", base_url="http://127.0.0.1:9").close()
        share_ssl_context(sys.modules["httpcore2"])  # the SDK's transport, imported by now
        sys.modules["httpcore2"].default_ssl_context()
        http = anthropic._base_client.httpx2
        call = {"type": "tool_use", "id": "toolu_warm", "name": "bash", "input": {"command": "ls"}}
        reply = {"id": "msg_warm", "type": "message", "role": "assistant", "model": "m",
                 "content": [{"type": "text", "text": "t"}, call], "stop_reason": "tool_use",
                 "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        client = anthropic.Anthropic(
            api_key="not-a-key", base_url="http://127.0.0.1:9", max_retries=0,
            http_client=http.Client(transport=http.MockTransport(
                lambda request: http.Response(200, json=reply))))
        tool = {"name": "bash", "description": "d",
                "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}
        client.messages.create(model="m", max_tokens=1, system="s", tools=[tool], messages=[
            {"role": "user", "content": "x"}, {"role": "assistant", "content": [call]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_warm",
                                          "content": "r", "is_error": True}]}])
        client.close()
        # and an API error (a 400): the SDK builds the validators of its error body on first use
        refusal = {"type": "error", "request_id": "req_warm",
                   "error": {"type": "invalid_request_error", "message": "m"}}
        client = anthropic.Anthropic(
            api_key="not-a-key", base_url="http://127.0.0.1:9", max_retries=0,
            http_client=http.Client(transport=http.MockTransport(
                lambda request: http.Response(400, json=refusal))))
        with contextlib.suppress(anthropic.BadRequestError):
            client.messages.create(model="m", max_tokens=1, messages=[
                {"role": "user", "content": "x"}])
        client.close()
    except Exception:
        pass


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller stops the runs (its own Ctrl-C)
    try:
        import anthropic  # the slow import, paid once: every run starts with it
    except ImportError:  # not installed: each run fails at its own import, as `python` would
        anthropic = None
    # Not on macOS: there a client asks the system for its proxies and certificates, through
    # frameworks that a process must not have used before it forks.
    if anthropic is not None and sys.platform == "linux":
        with warnings.catch_warnings():
            warm_up(anthropic)
    for name in PREIMPORTED:
        try:
            importlib.import_module(name)
        except ImportError:  # not installed: a run that imports it fails as `python` would
            pass
    gc.collect()  # the warm-up's garbage, not to be carried into every run
    gc.freeze()  # the runs' garbage collections leave the runner's objects (and pages) alone
    serve()


def serve():
    """Read the jobs on stdin; fork each run, report its pid at once and its exit status when it
    ends (a SIGCHLD wakes the loop); once stdin ends, wait for the runs still going on."""
    woken, wake = os.pipe()  # SIGCHLD writes to `wake`: the loop sees it on `woken`
    os.set_blocking(wake, False)
    os.set_blocking(woken, False)
    signal.set_wakeup_fd(wake)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    running = {}  # pid -> the job's id
    unread, reading = b"", True
    while reading:
        ready = select.select([0, woken], [], [])[0]
        if woken in ready:
            with contextlib.suppress(BlockingIOError):
                while os.read(woken, 512):  # empty it: one wake-up may stand for many ends
                    pass
            ended(running, os.WNOHANG)
        if 0 in ready:
            chunk = os.read(0, 65536)
            reading = bool(chunk)
            *lines, unread = (unread + chunk).split(b"\n")
            for line in lines:
                job = json.loads(line)
                code = compiled(job["script"])
                pid = os.fork()
                if pid == 0:
                    status = 1
                    try:
                        signal.set_wakeup_fd(-1)  # the run's signals are its own
                        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                        os.close(woken)
                        os.close(wake)
                        status = run(job, code)
                    finally:
                        os._exit(status)
                running[pid] = job["id"]
                report({"id": job["id"], "pid": pid})
    ended(running, 0)  # the caller has stopped the runs it did not wait for


def ended(running, options):
    """Report the runs that have ended (with options 0: wait for all). Their CPU time then
    counts in this process's children's, as a caller's getrusage sees it."""
    while running:
        try:
            pid, status = os.waitpid(-1, options)
        except ChildProcessError:
            return
        if not pid:
            return
        report({"id": running.pop(pid), "returncode": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    main()
