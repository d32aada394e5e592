"""Import one chapter as a module and print, as JSON, what the import did.

    python tests/import_check.py CHAPTER/code.py      (tests/test_chapters.py runs it)

Audit hooks see files opened for writing, sockets and processes; a watched os.environ sees
reads of the key variables; a wrapped load_dotenv() sees the .env being read (it belongs in
main(), not at import). Importing this module does nothing: it works only as a script.
"""

import importlib.util
import json
import os
import sys

SECRETS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
CHANGES = {
    "os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.symlink", "os.link", "os.truncate",
    "os.chmod", "os.chown", "os.utime", "shutil.copyfile", "shutil.copytree", "shutil.rmtree",
    "shutil.move", "tempfile.mkstemp", "tempfile.mkdtemp",
}
PROCESSES = {
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
    "os.forkpty",
}
seen = {"writes": [], "network": [], "processes": [], "asked": [], "key_reads": []}
watching = False


def hook(event, args):
    if not watching:
        return
    if event == "open" and isinstance(args[2], int) and args[2] & WRITING:
        seen["writes"].append(str(args[0]))
    elif event in CHANGES:
        seen["writes"].append(f"{event} {args[0]}")
    elif event.startswith("socket."):
        seen["network"].append(event)
    elif event in PROCESSES:
        seen["processes"].append(event)
    elif event == "builtins.input":
        seen["asked"].append(event)


class Watched(type(os.environ)):
    def __getitem__(self, key):
        if watching and key in SECRETS:
            seen["key_reads"].append(key)
        return super().__getitem__(key)


def counted(load_dotenv):
    def counting(*args, **kwargs):
        seen["dotenv_loads"] += 1
        return load_dotenv(*args, **kwargs)
    return counting


def main(path):
    global watching
    import dotenv
    import dotenv.main

    seen["dotenv_loads"] = 0
    dotenv.load_dotenv = dotenv.main.load_dotenv = counted(dotenv.main.load_dotenv)
    sys.addaudithook(hook)
    os.environ.__class__ = Watched
    spec = importlib.util.spec_from_file_location("chapter_under_test", path)
    module = importlib.util.module_from_spec(spec)
    watching = True
    spec.loader.exec_module(module)
    watching = False
    seen["cwd"] = sorted(os.listdir("."))
    seen["home"] = sorted(os.listdir(os.environ["HOME"]))
    print(json.dumps(seen))


if __name__ == "__main__":
    main(sys.argv[1])
