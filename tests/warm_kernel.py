"""Warm Jupyter kernels: a notebook's kernel for the price of a fork, not of `import anthropic`.

A kernel start costs about 2 CPU-seconds on a small machine: the interpreter, ipykernel, and the
chapter's `import anthropic`. WarmKernels starts one server process (this file, run as a script)
that imports ipykernel and anthropic once, with no thread and no zmq context, and forks one child
per kernel. The child is what `python -m ipykernel_launcher -f CONNECTION_FILE` would be: its own
session (as jupyter_client's start_new_session), the job's cwd and environment, stdin a pipe at
end of file, the client's stdout and stderr, and then ipykernel_launcher runs as __main__: a real
IPKernelApp on its own connection file, talking ZMQ to the client as any kernel does. It exits as
an interpreter does (threads joined, atexit run), and the server reports its exit status.

WarmKernels.manager_class() is an AsyncKernelManager for nbclient (kernel_manager_class) whose
provisioner is jupyter_client's LocalProvisioner with one change: the process it launches is a
warm child (WarmProcess: poll, wait, send_signal, terminate, kill, as subprocess.Popen), so
interrupt (SIGINT to the kernel's process group), shutdown and kill go as for any local kernel.
A launch that cannot be made warm exactly (another kernel command, Popen options, an environment
that differs in more than the names in MAY_DIFFER) is a cold one, as LocalProvisioner makes it.

What differs from a cold kernel: the modules in PRELOAD are imported already (that is the point)
and their objects are frozen out of the garbage collector's reach (gc.freeze: a collection in
a child would otherwise walk, and so copy, all of them); all children share the server's string
hash seed; the kernel's parent is the server, not the client. JPY_PARENT_PID still names the
client, as for a cold kernel, so ipykernel watches for its parent to become init instead; the
server kills the kernels left when its client closes the channel or ends.

Measured on the chapters' notebooks: a cold kernel start costs 1.8-2 CPU-seconds, a warm one about
0.2 (the fork, IPKernelApp's start, its exit).
"""

import itertools
import json
import os
import select
import signal
import socket
import subprocess
import sys

SERVER = os.path.abspath(__file__)

# Variables a job's environment may set differently from the server's: nothing the interpreter
# or an import reads at start-up reads them (tempfile's cached folder is reset in the child).
MAY_DIFFER = {
    "TMPDIR",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "MODEL_ID",
    "JPY_SESSION_NAME",
}


# What the server imports before it forks: what ipykernel imports before a kernel runs its first
# cell, and what the chapters' code.py imports (anthropic: 1.5 s of a cold start).
PRELOAD = [
    "ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.debugger",
    "IPython.core.debugger", "IPython.core.completerlib", "IPython.core.oinspect",
    "IPython.extensions.storemagic", "sqlite3", "psutil", "tornado.queues",
    "anthropic", "dotenv",
]


# ---- the client side (the process that runs nbclient) ---------------------------------------

class WarmKernels:
    """The server, and the kernels forked from it. A context manager: leaving it ends the server
    (every kernel must have been shut down by then; any left is killed)."""

    def __init__(self, env):
        # ipykernel reads JPY_PARENT_PID when it is imported: the server's is the kernels' own
        self.env = {**env, "JPY_PARENT_PID": str(os.getpid())}
        ours, theirs = socket.socketpair()
        try:
            with theirs:
                self.server = subprocess.Popen(
                    [sys.executable, SERVER, str(theirs.fileno())],
                    pass_fds=[theirs.fileno()],
                    env=self.env,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,  # a Ctrl-C for the tests is not one for the server
                )
        except BaseException:
            ours.close()
            raise
        self.channel = ours
        self.channel.setblocking(False)
        self.numbers = itertools.count(1)
        self.pids = {}  # job id -> pid, once forked
        self.returncodes = {}  # job id -> exit status, once ended
        self.unread = b""
        self.gone = False  # the server closed its end
        self.waiting = None  # a future the event loop resolves when the channel is readable
        self.launched = {"warm": 0, "cold": 0}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.channel is None:
            return
        self.channel.close()  # the server reads end of file, kills what is left and ends
        self.channel = None
        self.server.wait(timeout=30)

    def warm_job(self, cmd, kwargs):
        """The job for a launch that a fork makes exactly, or None."""
        if cmd[:3] != [sys.executable, "-m", "ipykernel_launcher"]:
            return None
        if set(kwargs) - {"env", "cwd"}:
            return None
        env = dict(kwargs.get("env") or os.environ)
        env["JPY_PARENT_PID"] = str(os.getpid())  # as jupyter_client's launch_kernel sets it
        names = set(env) | set(self.env)
        if any(env.get(name) != self.env.get(name) for name in names - MAY_DIFFER):
            return None
        cwd = kwargs.get("cwd")
        return {"argv": cmd, "env": env, "cwd": os.fspath(cwd) if cwd else os.getcwd()}

    async def launch(self, job, timeout=60):
        """Start a warm kernel; its WarmProcess once it runs in its own session."""
        import asyncio

        number = next(self.numbers)
        message = (json.dumps({"id": number, **job}) + "\n").encode()
        loop = asyncio.get_running_loop()
        await loop.sock_sendall(self.channel, message)
        async with asyncio.timeout(timeout):
            while True:
                self.drain()
                if number in self.pids:
                    break
                if self.gone:
                    raise RuntimeError("the warm kernel server ended")
                await self.readable(loop)
        self.launched["warm"] += 1
        return WarmProcess(self, number, self.pids[number], job["argv"])

    async def readable(self, loop):
        """Until the channel has something to read (one watcher however many wait)."""
        import asyncio

        if self.waiting is None or self.waiting.done():
            waiting = self.waiting = loop.create_future()
            fd = self.channel.fileno()

            def ready():
                loop.remove_reader(fd)
                if not waiting.done():
                    waiting.set_result(None)

            loop.add_reader(fd, ready)
        await asyncio.shield(self.waiting)

    def drain(self):
        """Read the server's reports so far, without blocking (as course.warm reads its runner's:
        the same reports)."""
        from course.warm import take_reports  # not at the top: the server runs this file alone

        while self.channel is not None and not self.gone:
            try:
                chunk = self.channel.recv(65536)
            except BlockingIOError:
                return
            if not chunk:
                self.gone = True
                return
            self.unread = take_reports(self.unread + chunk, self.pids, self.returncodes)

    def manager_class(self):
        """An AsyncKernelManager class whose kernels come from this server."""
        import uuid

        from jupyter_client.manager import AsyncKernelManager
        from jupyter_client.provisioning import LocalProvisioner

        kernels = self

        class WarmProvisioner(LocalProvisioner):
            async def launch_kernel(self, cmd, **kwargs):
                job = kernels.warm_job(cmd, kwargs)
                if job is None:
                    kernels.launched["cold"] += 1
                    return await super().launch_kernel(cmd, **kwargs)
                self.process = await kernels.launch(job)
                self.pid = self.pgid = self.process.pid  # its own session, as Popen would make
                self.cwd = job["cwd"]
                return self.connection_info

        class WarmKernelManager(AsyncKernelManager):
            async def _async_pre_start_kernel(self, **kw):
                if self.provisioner is None:
                    self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))
                    self.provisioner = WarmProvisioner(
                        kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self
                    )
                return await super()._async_pre_start_kernel(**kw)

        return WarmKernelManager


class WarmProcess:
    """A warm kernel as subprocess.Popen shows a process: poll, wait, signals, returncode."""

    stdin = stdout = stderr = None

    def __init__(self, kernels, number, pid, args):
        self.kernels, self.number, self.pid, self.args = kernels, number, pid, args
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            self.kernels.drain()
            self.returncode = self.kernels.returncodes.get(self.number)
            if self.returncode is None and self.kernels.gone:
                raise RuntimeError("the warm kernel server ended")
        return self.returncode

    def wait(self, timeout=None):
        import time

        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout)
            select.select([self.kernels.channel], [], [], left)
        return self.returncode

    def send_signal(self, signum):
        if self.poll() is None:  # as Popen: an ended process is not signalled (its pid is free)
            os.kill(self.pid, signum)

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def kill(self):
        self.send_signal(signal.SIGKILL)


# ---- the server (this file as a script) --------------------------------------------------------

def serve(fd):
    """Fork one kernel per job read from the channel; report each pid, then each exit status."""
    import gc
    import importlib
    import threading

    # pydevd (ipykernel.debugger) warns on stderr as it is imported; a kernel's stderr is the
    # notebook's, where a kernel starting cold says it before any cell runs, so it is not shown
    quiet = os.open(os.devnull, os.O_WRONLY)
    stderr = os.dup(2)
    os.dup2(quiet, 2)
    try:
        for name in PRELOAD:
            importlib.import_module(name)
    finally:
        os.dup2(stderr, 2)
        os.close(stderr)
        os.close(quiet)
    import zmq

    if threading.active_count() != 1 or zmq.Context._instance is not None:
        sys.exit("warm_kernel: an import started a thread or a zmq context; cannot fork")
    gc.freeze()  # what the children share stays shared: their collections leave it alone
    channel = socket.socket(fileno=fd)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # only to wake select up
    running = {}  # pid -> job id
    unread = b""

    def report(message):
        channel.sendall((json.dumps(message) + "\n").encode())

    def reap():
        while running:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            report({"id": running.pop(pid), "returncode": os.waitstatus_to_exitcode(status)})

    while True:
        ready = select.select([channel, wake_read], [], [])[0]
        if wake_read in ready:
            os.read(wake_read, 4096)
            reap()
        if channel not in ready:
            continue
        chunk = channel.recv(65536)
        if not chunk:  # the client is done (or gone): end what it left running
            for pid in running:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for pid in running:
                os.waitpid(pid, 0)
            return
        *lines, unread = (unread + chunk).split(b"\n")
        for job in map(json.loads, lines):
            started_read, started_write = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(started_read)
                channel.close()
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.close(wake_read)
                os.close(wake_write)
                os.setsid()
                os.write(started_write, b".")
                os.close(started_write)
                become_kernel(job)  # returns when the kernel has shut down
                sys.exit(0)  # the interpreter ends as `python -m ipykernel_launcher` would
            os.close(started_write)
            os.read(started_read, 1)  # the child is in its own session: signals reach it
            os.close(started_read)
            running[pid] = job["id"]
            report({"id": job["id"], "pid": pid})


def become_kernel(job):
    """In the forked child: `python -m ipykernel_launcher ARGS` with the job's cwd and env."""
    import runpy
    import tempfile

    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    tempfile.tempdir = None  # follow the job's TMPDIR
    stdin_read, stdin_write = os.pipe()  # as jupyter_client gives it: a pipe, closed at once
    os.close(stdin_write)
    os.dup2(stdin_read, 0)
    os.close(stdin_read)
    sys.orig_argv = list(job["argv"])
    sys.argv = ["-m", *job["argv"][3:]]  # run_module puts the launcher's path first
    sys.path[0] = os.getcwd()  # as `python -m` does
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
