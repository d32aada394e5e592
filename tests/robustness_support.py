"""What the robustness tests share: a request checker, a sandbox, a safety net, and
the hypothesis strategies that play a model which says anything at all.

Read test_robustness.py first; this file holds the machinery it uses.

- request_problems(request): everything the Messages API would refuse in one
  request, checked with the SDK's own types. A test asserts it is == [].
- Sandbox: a temporary parent folder holding the workdir and, around it, a secret
  file, a sentinel file and a sentinel folder that no tool may read or change.
- SafetyNet: stops a command that must be refused from running, in case a
  chapter forgets to refuse it, and remembers it so the test fails.
- model_events(...): random model turns (text, tool_use for known and unknown
  tools with good and broken inputs, every stop reason), API errors and Ctrl-C.
"""

import atexit
import copy
import functools
import io
import json
import os
import pickle
import shutil
import stat
import subprocess
import tempfile
import typing
from contextlib import redirect_stdout
from pathlib import Path
from unittest.mock import patch

import anthropic
import httpx2
from anthropic.types import ContentBlockParam, ToolParam, ToolUnionParam, UserMessageParam
from anthropic.types.message_create_params import MessageCreateParamsBase
from anthropic.types.tool_result_block_param import ToolResultBlockParam
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from support import FakeClient, new_session, reply, text, tool_use

# ======================================================================
# CHECKING A REQUEST AGAINST THE SDK'S OWN TYPES
# ======================================================================
# A TypeAdapter of a whole MessageParam checks nothing inside `content` (pydantic
# reads an Iterable lazily), so every block is checked on its own, strictly, and
# its keys are compared with the keys its TypedDict declares.


def _type_literal(typed_dict):
    """'text' for TextBlockParam: the value its `type` key must have."""
    hint = typing.get_type_hints(typed_dict, include_extras=True)["type"]
    while typing.get_origin(hint) is not typing.Literal:  # unwrap Required[...]
        hint = typing.get_args(hint)[0]
    return typing.get_args(hint)[0]


def _union_members(union):
    return {_type_literal(member): member for member in typing.get_args(union)}


BLOCK_TYPES = _union_members(ContentBlockParam)  # "text" -> TextBlockParam, ...
BLOCK_ADAPTER = TypeAdapter(ContentBlockParam)

# A tool_result's content is a string or a list of its own union of blocks.
_result_content = typing.get_type_hints(ToolResultBlockParam)["content"]
_inner_union = typing.get_args(
    next(arg for arg in typing.get_args(_result_content) if arg is not str)
)[0]
INNER_BLOCK_TYPES = _union_members(_inner_union)
INNER_BLOCK_ADAPTER = TypeAdapter(_inner_union)

TOOL_ADAPTER = TypeAdapter(ToolUnionParam)
MESSAGE_KEYS = set(UserMessageParam.__annotations__)  # role, content
REQUEST_KEYS = set(MessageCreateParamsBase.__annotations__)

ONLY_FROM_ASSISTANT = {"tool_use", "server_tool_use", "thinking", "redacted_thinking"}
ONLY_FROM_USER = {"tool_result"}


_verdicts = {}  # (adapter, the pickled value) -> the first error's message, or None


def first_error(adapter, value):
    """The message of the first error adapter.validate_python(value, strict=True) raises, or
    None. Remembered by the value's pickle, which tells apart every type and value the check
    tells apart (True from 1, a tuple from a list): a request sends the whole history again,
    so the same blocks and tools come back call after call."""
    try:
        key = id(adapter), pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    except Exception:  # a value pickle cannot take: checked as it is, each time
        key = None
    if key is not None and key in _verdicts:
        return _verdicts[key]
    try:
        adapter.validate_python(value, strict=True)
        verdict = None
    except ValidationError as error:
        verdict = error.errors()[0]["msg"]
    if key is not None:
        if len(_verdicts) > 20_000:
            _verdicts.clear()
        _verdicts[key] = verdict
    return verdict


def block_problems(block, where, types=BLOCK_TYPES, adapter=BLOCK_ADAPTER):
    """What the API would refuse in one content block."""
    if not isinstance(block, dict):
        return [f"{where}: a block must be a dict, not {type(block).__name__}"]
    typed_dict = types.get(block.get("type"))
    if typed_dict is None:
        return [f"{where}: unknown block type {block.get('type')!r}"]
    problems = []
    error = first_error(adapter, block)
    if error is not None:
        problems.append(f"{where}: not a valid {typed_dict.__name__}: {error}")
    unknown = sorted(set(block) - set(typed_dict.__annotations__))
    if unknown:
        problems.append(f"{where}: keys the API does not know: {unknown}")
    if block["type"] == "text" and isinstance(block.get("text"), str) and not block["text"].strip():
        problems.append(
            f"{where}: a blank text block (the API refuses text without non-whitespace)"
        )
    if block["type"] == "tool_result" and isinstance(block.get("content"), list):
        for number, inner in enumerate(block["content"]):
            problems += block_problems(
                inner, f"{where}.content[{number}]", INNER_BLOCK_TYPES, INNER_BLOCK_ADAPTER
            )
    return problems


def _blocks(message):
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _tool_use_ids(message):
    return [
        b.get("id") for b in _blocks(message) if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def _tool_result_ids(message):
    return [
        b.get("tool_use_id")
        for b in _blocks(message)
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


def history_problems(messages):
    """What the API would refuse in `messages` of a request. [] if nothing."""
    if not isinstance(messages, list) or not messages:
        return ["messages must be a non-empty list"]
    problems = []
    seen_ids = set()
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            problems.append(f"{where}: a message must be a dict")
            continue
        if set(message) - MESSAGE_KEYS:
            problems.append(
                f"{where}: keys the API does not know: {sorted(set(message) - MESSAGE_KEYS)}"
            )
        role = "user" if i % 2 == 0 else "assistant"
        if message.get("role") != role:
            problems.append(
                f"{where}: role {message.get('role')!r}, expected {role!r} (roles alternate, user "
                f"first)"
            )
        content = message.get("content")
        if not content or (isinstance(content, str) and not content.strip()):
            problems.append(f"{where}: empty content")
            continue
        if not isinstance(content, (str, list)):
            problems.append(f"{where}: content must be a string or a list")
            continue
        for number, block in enumerate(_blocks(message)):
            problems += block_problems(block, f"{where}.content[{number}]")
            kind = block.get("type") if isinstance(block, dict) else None
            if message.get("role") == "user" and kind in ONLY_FROM_ASSISTANT:
                problems.append(f"{where}.content[{number}]: a {kind} block in a user turn")
            if message.get("role") == "assistant" and kind in ONLY_FROM_USER:
                problems.append(f"{where}.content[{number}]: a {kind} block in an assistant turn")
        for tool_use_id in _tool_use_ids(message):
            if tool_use_id in seen_ids:
                problems.append(f"{where}: tool_use id {tool_use_id!r} used twice")
            seen_ids.add(tool_use_id)
        # Each tool_use gets exactly one tool_result, in order, first in the next user turn.
        asked = _tool_use_ids(messages[i - 1]) if i > 0 and message.get("role") == "user" else []
        answered = _tool_result_ids(message)
        if message.get("role") == "user" and answered != asked:
            problems.append(
                f"{where}: tool_results for {answered}, but the turn before asked for {asked}"
            )
        leading = [b.get("tool_use_id") for b in _blocks(message)[:len(asked)]
                   if isinstance(b, dict) and b.get("type") == "tool_result"]
        if asked and leading != asked:
            problems.append(
                f"{where}: the tool_results must come first, in the order of the tool_use blocks"
            )
    if messages[-1].get("role") == "assistant" and _tool_use_ids(messages[-1]):
        problems.append(f"messages[{len(messages) - 1}]: tool_use with no tool_result after it")
    # A request may end with an assistant turn: one the API paused (pause_turn), sent back as it
    # is so that the model goes on with it (never one that asks for tools: checked above).
    return problems


def tool_problems(tools):
    problems = []
    for number, tool in enumerate(tools):
        error = first_error(TOOL_ADAPTER, tool)
        if error is not None:
            problems.append(f"tools[{number}]: not a valid tool: {error}")
        unknown = sorted(set(tool) - set(ToolParam.__annotations__))
        if tool.get("type", "custom") == "custom" and unknown:
            problems.append(f"tools[{number}]: keys the API does not know: {unknown}")
    names = [tool.get("name") for tool in tools]
    if len(names) != len(set(names)):
        problems.append(f"tool names repeat: {names}")
    return problems


def request_problems(request):
    """Everything the Messages API would refuse in one create() call. [] if nothing."""
    problems = [f"unknown request key {key!r}" for key in request if key not in REQUEST_KEYS]
    problems += tool_problems(request.get("tools", []))
    system = request.get("system")
    if system is not None and not (isinstance(system, str) or isinstance(system, list)):
        problems.append("system must be a string or a list of text blocks")
    return problems + history_problems(request.get("messages"))


# ======================================================================
# THE FAKE MODEL, AND ERRORS AS THE SDK RAISES THEM
# ======================================================================

class EndlessClient(FakeClient):
    """support.FakeClient that answers a plain end_turn text once its replies run out."""

    def create(self, **request):
        if not self.replies:
            self.replies.append(reply(text("(no more scripted replies)")))
        return super().create(**request)


FAKE_HTTP_REQUEST = httpx2.Request("POST", "http://127.0.0.1:9/v1/messages")

API_ERRORS = {  # status: (exception class, error type, message), as the API sends them
    400: (anthropic.BadRequestError, "invalid_request_error", "messages: roles must alternate"),
    401: (anthropic.AuthenticationError, "authentication_error", "invalid x-api-key"),
    429: (
        anthropic.RateLimitError,
        "rate_limit_error",
        "Number of request tokens has exceeded your rate limit",
    ),
    500: (anthropic.InternalServerError, "api_error", "Internal server error"),
    529: (anthropic.OverloadedError, "overloaded_error", "Overloaded"),
}


def error_body(status):
    _, kind, message = API_ERRORS[status]
    return {"type": "error", "error": {"type": kind, "message": message}}


def api_error(kind):
    """The exception the SDK raises for `kind`: a status code, "connection" or "timeout"."""
    if kind == "connection":
        return anthropic.APIConnectionError(request=FAKE_HTTP_REQUEST)
    if kind == "timeout":
        return anthropic.APITimeoutError(request=FAKE_HTTP_REQUEST)
    body = error_body(kind)
    response = httpx2.Response(kind, json=body, request=FAKE_HTTP_REQUEST)
    return API_ERRORS[kind][0](f"Error code: {kind} - {body}", response=response, body=body)


# ======================================================================
# THE SANDBOX: A WORKDIR, AND THINGS AROUND IT NO TOOL MAY TOUCH
# ======================================================================

SECRET = "TOP-SECRET-7f3a"  # the content of the secret files outside the workdir


# A sandbox is made and removed for every example: in memory where the system has a tmpfs for
# it (removing a folder on a disk's file system costs a journal write, a third of a ms).
MEMORY_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


class Sandbox:
    """A temporary parent folder:

        parent/secret.txt            the secret (its content must never reach the model)
        parent/sentinel.txt          must stay as it is
        parent/sentinel_dir/         must stay as it is
        parent/home/secret.txt       HOME points here while the sandbox is open, so `~` is inside
        parent/work/                 the workdir: notes.txt, sub/inner.txt, and symlinks
                                     that lead out (link_out, link_secret, link_rel,
                                     chain1 -> chain2 -> out, dangling_out, sub/link_up),
                                     a loop (loop_a <-> loop_b) and one that stays in.
    """

    def __init__(self):
        # Built with plain strings and os calls: a sandbox is made for every example.
        parent = os.path.realpath(tempfile.mkdtemp(prefix="robustness-", dir=MEMORY_TMP))
        self.parent = Path(parent)
        self.work = self.parent / "work"
        self.home = self.parent / "home"
        work, home = f"{parent}/work", f"{parent}/home"
        os.mkdir(f"{parent}/sentinel_dir")
        os.mkdir(home)
        os.mkdir(work)
        os.mkdir(f"{work}/sub")
        for path, content in [(f"{parent}/secret.txt", SECRET + "\n"),
                              (f"{parent}/sentinel.txt", "sentinel\n"),
                              (f"{parent}/sentinel_dir/inside.txt", "sentinel inside\n"),
                              (f"{home}/secret.txt", SECRET + "\n"),
                              (f"{work}/notes.txt", "# Field notes\nline two\nline three\n"),
                              (f"{work}/sub/inner.txt", "inner\n")]:
            with open(path, "w") as file:
                file.write(content)
        links = {
            "link_out": parent,
            "link_secret": f"{parent}/secret.txt",
            "link_rel": "../secret.txt",
            "chain1": "chain2",
            "chain2": "../secret.txt",
            "dangling_out": f"{parent}/not-there.txt",
            "sub/link_up": "../..",
            "loop_a": "loop_b",
            "loop_b": "loop_a",
            "link_inside": "notes.txt",
        }
        for name, target in links.items():
            os.symlink(target, f"{work}/{name}")

    def __enter__(self):
        """HOME is the sandbox's home until __exit__, which puts the environment back as it was
        (as patch.dict would, but by setting HOME alone when nothing else changed)."""
        self._environ = os.environ.copy()
        os.environ["HOME"] = str(self.home)
        return self

    def __exit__(self, *exc):
        try:
            if os.environ != {**self._environ, "HOME": str(self.home)}:
                os.environ.clear()  # something else changed it too: all of it back
                os.environ.update(self._environ)
            elif "HOME" in self._environ:
                os.environ["HOME"] = self._environ["HOME"]
            else:
                del os.environ["HOME"]
        finally:
            shutil.rmtree(self.parent)

    def outside(self):
        """A snapshot of the parent folder, the workdir left out."""
        return tree(self.parent, skip=("work",))

    def fill_in(self, value):
        """A drawn value with the placeholders <parent> and <work> replaced by this sandbox's
        folders."""
        if isinstance(value, str):
            return value.replace(PARENT, str(self.parent)).replace(WORK, str(self.work))
        if isinstance(value, list):
            return [self.fill_in(item) for item in value]
        if isinstance(value, dict):
            return {key: self.fill_in(item) for key, item in value.items()}
        return value


PARENT, WORK = "<parent>", "<work>"  # placeholders in drawn paths, filled in per sandbox


@functools.cache
def reference_sandbox():
    """One sandbox, made once, to try drawn paths on (every sandbox has the same layout)."""
    box = Sandbox()
    atexit.register(shutil.rmtree, box.parent, True)
    return box


@functools.cache  # the answer depends only on the path: every sandbox has the same layout
def could_only_reach_the_sandbox(path):
    """True if a tool acting on `path` could reach nothing outside the sandbox, even
    with a broken guard. Every random path passes this check (or is swapped for one
    that does), so that no bug in a chapter can make a test write outside its
    temporary folder.
    """
    box = reference_sandbox()
    path = box.fill_in(path)
    if "\0" in path:
        return True  # the OS refuses such a path
    candidates = [box.work / path]
    if path == "~" or path.startswith("~/"):
        candidates.append(box.home / path[2:])
    elif path.startswith("~"):
        return False  # ~user: somebody's real home
    return all(
        Path(os.path.realpath(candidate)).is_relative_to(box.parent) for candidate in candidates
    )


def tree(root, skip=()):
    """Every entry under `root`, not following symlinks: {relative path: what it is and holds}.

    `skip` names folders left out (with what they hold); the folders above them are
    left out too, so that creating `.agent/` for `.agent/plans/` is no change.
    """
    def left_out(relative):
        return any(relative == s or relative.startswith(s + "/") for s in skip)

    def above_skipped(relative):
        return any(s.startswith(relative + "/") for s in skip)

    # Plain strings, not Paths: a snapshot is taken twice an example, and Path's parsing was
    # most of its time. (POSIX: os.walk joins with "/", so a relative path is already posix.)
    top = os.fspath(Path(root))
    found = {}
    for folder, dirs, files in os.walk(top):
        inside = folder[len(top) + 1:]  # "" for the root itself
        for name in sorted(dirs + files):
            relative = f"{inside}/{name}" if inside else name
            if left_out(relative) or above_skipped(relative):
                continue
            path = os.path.join(folder, name)
            info = os.lstat(path)
            mode = oct(stat.S_IMODE(info.st_mode))
            if stat.S_ISLNK(info.st_mode):
                found[relative] = ("symlink", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[relative] = ("folder", mode)
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as file:
                    found[relative] = ("file", mode, file.read())
            else:
                found[relative] = ("other", mode)
        dirs[:] = [d for d in dirs if not left_out(f"{inside}/{d}" if inside else d)]
    return found


# ======================================================================
# THE SAFETY NET FOR BASH
# ======================================================================
# The random model only ever asks for the commands below. The last two must be
# refused by the chapter's catastrophic-command filter; if a chapter forgot to,
# the net stops them before they start and the test fails.

SAFE_COMMANDS = [
    "echo hello",
    "ls",
    "ls -la sub",
    "cat notes.txt",
    "cat missing.txt",
    "pwd",
    "printf x > made-by-bash.txt",
    "true",
    "false",
    "sleep 0",
    "echo a\0b",
    "wc -l notes.txt",
]
MUST_BE_REFUSED = ["rm -rf /", ":(){ :|:& };:"]


class SafetyNet:
    """While open, subprocess.Popen refuses to start a command that must be refused."""

    def __init__(self):
        self.stopped = []

    def __enter__(self):
        net, real_popen = self, subprocess.Popen

        class GuardedPopen(real_popen):
            def __init__(self, args, *rest, **options):
                if isinstance(args, str) and (
                    args.strip() in MUST_BE_REFUSED or "rm -rf" in args or ":(){" in args
                ):
                    net.stopped.append(args)
                    raise RuntimeError(
                        f"the safety net stopped {args!r}: the chapter should have refused it"
                    )
                super().__init__(args, *rest, **options)

        self._patch = patch.object(subprocess, "Popen", GuardedPopen)
        self._patch.start()
        return self

    def __exit__(self, *exc):
        self._patch.stop()


# ======================================================================
# STRATEGIES: A MODEL THAT SAYS ANYTHING
# ======================================================================

STOP_REASONS = ["end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal",
                "model_context_window_exceeded"]
API_ERROR_KINDS = [400, 401, 429, 500, 529, "connection", "timeout"]
# What a user may type at a question: a permission, a plan, an ask_user_question (s06: an
# option's number, several, one out of range, or their own words).
ANSWERS = ["y", "n", "a", "", "some feedback", "1", "2,1", "7", EOFError]
LATER_TOOLS = ["todo_write", "enter_plan_mode", "exit_plan_mode", "ask_user_question"]
UNKNOWN_TOOLS = [
    "",
    "Bash",
    "rm",
    "read_file ",
    "__class__",
    "../bash",
    "tool with spaces",
    "python",
]


def weighted(*choices):
    """A strategy that picks one of (weight, strategy) pairs. (st.one_of weighs its
    branches alike, and treats the same strategy given twice as one branch.)"""
    picks = [strategy for weight, strategy in choices for _ in range(weight)]
    index = st.integers(0, len(picks) - 1)  # built once: a strategy is checked on its first draw

    @st.composite
    def pick(draw):
        return draw(picks[draw(index)])
    return pick()


# Text as the model writes it: any Unicode that UTF-8 can carry (no lone surrogates).
any_text = st.text(st.characters(codec="utf-8"), max_size=12)
some_text = any_text.map(lambda value: value if value.strip() else value[:11] + "x")
"""Text that is not blank (the API sends no blank text blocks): a blank draw gets an "x" at its
end, not filtered out (a filter that often says no throws away a third of the examples)."""
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**6),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=3,
)

BROKEN_SETTINGS = ["{", "null", "[]", '{"permissions": 5}', '{"permissions": {"allow": "bash"}}',
                   '{"hooks": []}', '{"hooks": {"PreToolUse": "x"}}', "\0"]

PATH_SEGMENTS = [
    "notes.txt",
    "sub",
    "inner.txt",
    "new.txt",
    "deep",
    ".",
    "..",
    "~",
    "link_out",
    "link_secret",
    "link_rel",
    "chain1",
    "dangling_out",
    "link_up",
    "loop_a",
    "link_inside",
    ".agent",
    "settings.json",
    "plans",
    "",
    " ",
    "a\\b",
    "\u2024\u2024",
    "\uff0e\uff0e",
    "a\0b",
    "x" * 300,
]


ATTACK_PATHS = [
    "../secret.txt",
    "./../secret.txt",
    "sub/../../sentinel.txt",
    "../sentinel_dir/inside.txt",
    "..",
    f"{PARENT}/secret.txt",
    f"{PARENT}/sentinel_dir/new.txt",
    f"{WORK}/../sentinel.txt",
    "~/secret.txt",
    "~",
    "link_out/secret.txt",
    "link_out/sentinel_dir/new.txt",
    "link_secret",
    "link_rel",
    "chain1",
    "dangling_out",
    "sub/link_up/sentinel.txt",
    "loop_a",
    "notes.txt\0",
    "",
    "   ",
    "..\\secret.txt",
    "\u2024\u2024/secret.txt",
]
PLAIN_PATHS = [
    "notes.txt",
    "sub/inner.txt",
    "new.txt",
    "sub/new/deep.txt",
    ".",
    "./notes.txt",
    "link_inside",
    ".agent/settings.json",
    ".agent/plans/plan.md",
    f"{WORK}/notes.txt",
    "x" * 300,
]

PATHS = weighted(
    (3, st.sampled_from(ATTACK_PATHS)),
    (3, st.sampled_from(PLAIN_PATHS)),
    (1, st.lists(st.sampled_from(PATH_SEGMENTS), min_size=1, max_size=4).map("/".join)),
    (1, st.text(alphabet="./~\\ \0ab", max_size=8)),
).map(lambda path: path if could_only_reach_the_sandbox(path) else "../sentinel.txt")
"""Paths a model might send: plain, odd, and attacks. One that could reach past the sandbox
is swapped for ../sentinel.txt (an attack that stays in the sandbox), not filtered out:
a filter that often says no makes hypothesis avoid drawing paths at all."""

COMMANDS = weighted((4, st.sampled_from(SAFE_COMMANDS)), (1, st.sampled_from(MUST_BE_REFUSED)))

PATTERNS = st.one_of(st.sampled_from([
    "*", "**/*", "*.txt", "sub/*", "**/*.md", "*/secret.txt", "*/*", "link_out/*", "../*", "/*",
    "~/*", "[.][.]/secret.txt", ".*", "**", ".", "./", "", "*\0", f"{PARENT}/*", "**/../secret.txt",
]), PATHS)
"""Glob patterns, plain and hostile."""


def value_for(field, spec):
    """A strategy for one field of a tool's input, from its JSON schema (`spec`)."""
    if field == "command":
        return COMMANDS
    if field == "path":
        return PATHS
    if field == "pattern":
        return PATTERNS
    if field == "old_string":
        return st.one_of(
            st.sampled_from(["Field notes", "line", "line two", "", "inner"]), any_text
        )
    if field == "content":
        return st.one_of(any_text, st.sampled_from(BROKEN_SETTINGS))
    if "enum" in spec:
        return st.sampled_from([*spec["enum"], "bogus"])
    kind = spec.get("type")
    if kind == "string":
        return any_text
    if kind == "integer":
        return st.one_of(st.integers(-2, 6), st.sampled_from([10**6, 2**63]))
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        items = value_for(None, spec.get("items", {}))
        if "minItems" in spec or "maxItems" in spec:  # mostly inside the limits, sometimes not
            low, high = spec.get("minItems", 0), spec.get("maxItems", 3)
            return weighted((3, st.lists(items, min_size=low, max_size=high)),
                            (1, st.lists(items, min_size=max(low - 1, 0), max_size=high + 1)))
        return st.lists(items, max_size=3)
    if kind == "object" and "properties" in spec:
        return object_for(spec)
    return json_values


def object_for(schema):
    """A JSON object that fits `schema`: its required fields and some of the optional ones."""
    fields = schema.get("properties", {})
    required = {
        key: value_for(key, fields[key]) for key in schema.get("required", []) if key in fields
    }
    optional = {key: value_for(key, spec) for key, spec in fields.items() if key not in required}
    return st.fixed_dictionaries(required, optional=optional)


WRONG_TYPES = [None, 1, 1.5, True, [], {}, "text"]
HOW_BROKEN = st.sampled_from(
    ["good"] * 8 + ["missing field", "wrong type", "extra field", "other object"]
)
EXTRA_FIELDS = st.sampled_from(["workdir", "self", "extra", "cwd"])


@functools.cache
def sampled(choices):
    """st.sampled_from(choices), one strategy per tuple of choices (each is checked once)."""
    return st.sampled_from(choices)


@functools.cache
def wrong_for(kind):
    """The wrong values for a field whose drawn value is of type `kind`."""
    return st.sampled_from([value for value in WRONG_TYPES if type(value) is not kind])


def tool_input(schema):
    """Inputs for a tool: mostly good ones, sometimes broken the ways models break them."""
    good_inputs = object_for(schema)
    fields = set(schema.get("properties", {}))
    other_object = st.dictionaries(
        st.text(max_size=6).filter(lambda key: key not in fields), json_values, max_size=2
    )

    required = st.sampled_from(schema["required"]) if schema.get("required") else None

    @st.composite
    def one_input(draw):
        broken = dict(draw(good_inputs))
        how = draw(HOW_BROKEN)
        if how == "missing field" and required is not None:
            del broken[draw(required)]
        elif how == "wrong type" and broken:
            key = draw(sampled(tuple(sorted(broken))))
            broken[key] = draw(wrong_for(type(broken[key])))
        elif how == "extra field":
            broken[draw(EXTRA_FIELDS)] = draw(json_values)
        elif how == "other object":  # fields the tool does not have (never its own field names)
            broken = draw(other_object)
        return broken
    return one_input()


_ask_inputs_cache = {}


def ask_inputs(schema):
    """Inputs for ask_user_question (s06): half of them questions that pass its checks, so that
    the user is really asked (and answers at random), half drawn from the schema, often not.
    One strategy per schema, built once (a strategy is checked on its first draw)."""
    key = json.dumps(schema, sort_keys=True)
    if key not in _ask_inputs_cache:
        _ask_inputs_cache[key] = _ask_inputs(schema)
    return _ask_inputs_cache[key]


def _ask_inputs(schema):
    option = st.fixed_dictionaries({"label": some_text, "description": some_text})
    question = st.fixed_dictionaries({
        "question": some_text,
        "header": some_text,  # at most 12 characters, as any_text is
        "options": st.lists(option, min_size=2, max_size=4, unique_by=lambda o: o["label"]),
        "multiSelect": st.booleans(),
    })
    asked = st.lists(question, min_size=1, max_size=4, unique_by=lambda q: q["question"])
    return weighted((1, st.fixed_dictionaries({"questions": asked})), (1, tool_input(schema)))


def tool_use_blocks(tools):
    """tool_use blocks (without ids): mostly a known tool, sometimes a later chapter's tool or
    nonsense."""
    inputs = {tool["name"]: tool_input(tool["input_schema"]) for tool in tools}
    if "ask_user_question" in inputs:
        schema = next(tool for tool in tools if tool["name"] == "ask_user_question")
        inputs["ask_user_question"] = ask_inputs(schema["input_schema"])
    names = sorted(inputs)
    odd_names = st.sampled_from(LATER_TOOLS + UNKNOWN_TOOLS)
    random_object = st.dictionaries(st.text(max_size=6), json_values, max_size=2)
    kinds = st.sampled_from(["known"] * 4 + ["odd name", "random name"])
    known_names, random_names = st.sampled_from(names), st.text(max_size=10)
    one_in_four = st.integers(0, 3)

    @st.composite
    def block(draw):
        kind = draw(kinds)
        if kind == "known":
            name = draw(known_names)
        else:
            name = draw(odd_names if kind == "odd name" else random_names)
        if name in inputs:
            value = draw(inputs[name])
        else:  # an unknown tool: mostly what looks like another tool's input, sometimes anything
            value = (
                draw(inputs[draw(known_names)])
                if draw(one_in_four)
                else draw(random_object)
            )
        return {"type": "tool_use", "name": name, "input": value}
    return block()


def _model_events(tools, interrupts):
    # Weighted towards replies that call tools and stop for them, so that even the
    # small examples hypothesis tries first run some tools.
    block = weighted((2, tool_use_blocks(tools)), (1, some_text.map(text)))
    stop_reason = weighted(
        (2, st.none()), (1, st.sampled_from(STOP_REASONS))
    )  # None: the fitting one
    turn = st.tuples(st.just("reply"), st.lists(block, min_size=1, max_size=3), stop_reason)
    error = st.tuples(st.just("api error"), st.sampled_from(API_ERROR_KINDS))
    ctrl_c = st.just(("ctrl-c",))
    event = weighted((6, turn), (1, error), *([(1, ctrl_c)] if interrupts else []))
    return st.lists(event, min_size=2, max_size=6)


_events_cache = {}
_events_by_list = {}


def model_events(tools, interrupts=True):
    """What the model call does, call after call: ("reply", blocks, stop_reason),
    ("api error", kind) or ("ctrl-c",). One strategy per tool list, built once."""
    seen = _events_by_list.get((id(tools), interrupts))
    if seen is not None and seen[0] is tools and seen[1] == tools:  # the same list, unchanged
        return seen[2]
    key = (json.dumps(tools, sort_keys=True), interrupts)
    if key not in _events_cache:
        _events_cache[key] = _model_events(tools, interrupts)
    # A chapter's TOOLS is one list: remembered with a copy, so that the next example skips the
    # JSON (the list is kept alive, so its id stays its own).
    _events_by_list[(id(tools), interrupts)] = tools, copy.deepcopy(tools), _events_cache[key]
    return _events_cache[key]


def replies_for(events, box):
    """Turn drawn events into what EndlessClient plays: Messages, and functions that raise."""
    replies, numbers = [], iter(range(1, 10_000))
    for event in events:
        if event[0] == "reply":
            _, blocks, stop_reason = event
            blocks = [
                dict(block, id=f"toolu_r{next(numbers):03d}", input=box.fill_in(block["input"]))
                if block["type"] == "tool_use"
                else block
                for block in blocks
            ]
            replies.append(reply(*blocks, stop_reason=stop_reason))
        elif event[0] == "api error":
            replies.append(lambda request, kind=event[1]: api_error(kind))
        else:
            replies.append(lambda request: KeyboardInterrupt())
    return replies


prompts = st.lists(
    any_text.map(lambda value: value.strip() or "x"), min_size=1, max_size=3
)  # as the REPL sends them: stripped, never empty (an empty one becomes "x", not filtered out)


# What a Python hook (s04 and later) may return, or raise: good decisions and bad ones.
HOOK_OUTCOMES = [None, {"decision": "block", "reason": "a hook says no"}, {"decision": "block"},
                 {"decision": "allow"}, {"context": "a hook adds this"}, {"context": " "},
                 {"decision": "maybe"}, "not a decision", RuntimeError]


def hook_returning(outcome):
    """A hook function that always returns `outcome`, or raises it if it is an exception class."""
    def hook(event):
        if isinstance(outcome, type) and issubclass(outcome, BaseException):
            raise outcome("raised by a hook")
        return copy.deepcopy(outcome)
    return hook


def answering(data, answers=ANSWERS):
    """A stand-in for input(): each question gets a random answer drawn by hypothesis."""
    choices = sampled(tuple(answers))

    def fake_input(prompt=""):
        answer = data.draw(choices, label="answer")
        if isinstance(answer, type) and issubclass(answer, BaseException):
            raise answer()
        return answer
    return fake_input


# ======================================================================
# PLAN MODE (s06)
# ======================================================================
# The plan-mode check assumes what s06_plan_mode has: the Session dataclass has a boolean
# field `plan_mode`, True while plan mode is on, and every tool call goes through the
# module-level function run_tool(session, block). It turns itself on only for a chapter
# whose Session has that field. (Written before s06 landed; checked against it since.
# If s06 renames the field or the function, change PLAN_MODE_FIELD or PlanModeWatch.)

PLAN_MODE_FIELD = "plan_mode"
PLANS_FOLDER = ".agent/plans"


def has_plan_mode(chapter):
    return PLAN_MODE_FIELD in getattr(chapter.Session, "__dataclass_fields__", {})


class PlanModeWatch:
    """Wraps chapter.run_tool: a tool call that starts in plan mode may change only
    .agent/plans/."""

    def __init__(self, chapter):
        self.chapter, self.broken = chapter, []

    def __enter__(self):
        real_run_tool = self.chapter.run_tool

        def watched(session, block, *rest, **options):
            if not getattr(session, PLAN_MODE_FIELD, False):
                return real_run_tool(session, block, *rest, **options)
            before = tree(session.workdir, skip=(PLANS_FOLDER,))
            try:
                return real_run_tool(session, block, *rest, **options)
            finally:
                if tree(session.workdir, skip=(PLANS_FOLDER,)) != before:
                    self.broken.append(
                        f"{block['name']} {block['input']!r} changed the workdir in plan mode"
                    )

        self._patch = patch.object(self.chapter, "run_tool", watched)
        self._patch.start()
        return self

    def __exit__(self, *exc):
        self._patch.stop()


# ======================================================================
# SMALL HELPERS
# ======================================================================

def tool_names_by_id(messages):
    return {b["id"]: b["name"] for m in messages if m["role"] == "assistant"
            for b in m["content"] if b.get("type") == "tool_use"}


def tool_results(messages):
    return [b for m in messages if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result"]


def run_one_tool(chapter, workdir, name, tool_input_value, answer="y"):
    """Let the model call one tool through run_turn; return the tool_result it got.

    Questions (s03 and later) are answered `answer`, "y" by default, so that what
    stops a bad path is the workspace guard and not a denied permission.
    """
    client = EndlessClient(reply(tool_use("toolu_1", name, tool_input_value)))
    session = new_session(chapter, client, workdir)
    with patch("builtins.input", lambda prompt="": answer), redirect_stdout(io.StringIO()):
        chapter.run_turn(session, f"use {name}")
    results = tool_results(client.calls[1]["messages"])
    assert [result["tool_use_id"] for result in results] == ["toolu_1"]
    return results[0]
