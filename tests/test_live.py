"""The live path: with a key set, a chapter talks HTTP to the API with the real SDK.

No test may reach the real API, so a tiny Messages endpoint runs on loopback (the session's
`api`, tests/live_api.py) and ANTHROPIC_BASE_URL points the chapter at it. The chapter runs as
a subprocess, without --offline, exactly as a learner with a key runs it. The cases of the
live path (refusals, broken replies, a full context, retries, ...) are tests/test_live_path.py.
"""

import json

import pytest

from live_api import raw
from support import (
    CHAPTERS,
    PRESENT,
    ROOT,
    clean_env,
    golden,
    message_json,
    run_chapter,
)

KEY = "sk-ant-test-LIVEKEY-0123456789"


REPLIES = [
    message_json(
        [
            {
                "type": "tool_use",
                "id": "toolu_live_1",
                "name": "bash",
                "input": {"command": "echo live"},
            }
        ],
        "tool_use",
    ),
    message_json([{"type": "text", "text": "The command printed live."}]),
]


@pytest.mark.parametrize("chapter", [CHAPTERS[0], PRESENT[-1]])
def test_with_a_key_the_chapter_talks_to_the_api(chapter, api, tmp_path):
    api.answer(*[raw(json.dumps(reply).encode()) for reply in REPLIES])
    base_url, seen = api.url, api.seen
    trace = tmp_path / "trace.jsonl"
    env = clean_env(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=base_url, MODEL_ID="test-model")

    mode = ["--mode", "bypass"] if chapter >= "s03" else []
    done = run_chapter(
        chapter, "--workdir", str(tmp_path / "w"), "--trace", str(trace), *mode, "say live", env=env
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"{chapter} · live: test-model at {base_url}"
    assert [request["path"] for request in seen] == ["/v1/messages", "/v1/messages"]
    assert [request["headers"]["Authorization"] for request in seen] == [f"Bearer {KEY}"] * 2
    first, second = (request["body"] for request in seen)
    assert first["model"] == "test-model"
    # Live, the system prompt is one text block that ends the cached prefix (tools, system).
    workdir = str((tmp_path / "w").resolve())
    assert first["system"] == [{
        "type": "text",
        "text": golden(chapter)["system"].replace("{workdir}", workdir),
        "cache_control": {"type": "ephemeral"},
    }]
    assert first["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "say live"}]}
    ]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_live_1",
                    "name": "bash",
                    "input": {"command": "echo live"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_live_1",
                    "content": "live\n[exit code: 0]",
                }
            ],
        },
    ]
    # The trace holds exactly what was sent, and never the key.
    recorded = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [call["request"]["messages"] for call in recorded] == [
        first["messages"],
        second["messages"],
    ]
    assert KEY not in trace.read_text() and KEY not in done.stdout and KEY not in done.stderr
    # After each call, a line of usage (the answers say 1 token in, 1 out).
    usage = "  [tokens: 1 in (0 read from the cache, 0 written to it), 1 out]"
    at = done.stdout.splitlines().index(usage)
    assert done.stdout.splitlines()[at:] == [
        usage, "  > bash: echo live", "    live", "    [exit code: 0]", usage,
        "The command printed live.",
    ]


def test_a_script_given_is_played_offline_even_with_a_key(tmp_path):
    """An instructor's recording replays offline for a class whose keys are set."""
    env = clean_env(
        ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL="http://127.0.0.1:9"
    )  # nothing listens there
    script = ROOT / "s01_loop" / "scenario.json"

    prompt = json.loads(script.read_text(encoding="utf-8"))["prompt"]  # its own: it plays

    done = run_chapter(
        "s01_loop", "--workdir", str(tmp_path), "--script", str(script), prompt, env=env
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert (
        done.stdout.splitlines()[0]
        == f"s01_loop · offline (--script): the scripted model plays {script}"
    )
