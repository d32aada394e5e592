"""The live path: with a key set, a chapter talks HTTP to the API with the real SDK.

No test may reach the real API, so a tiny Messages endpoint runs on loopback and
ANTHROPIC_BASE_URL points the chapter at it. The chapter runs as a subprocess,
without --offline, exactly as a learner with a key runs it.
"""

import json

import pytest

from support import (
    CHAPTERS,
    PRESENT,
    ROOT,
    clean_env,
    loopback_messages_api,
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


@pytest.fixture
def endpoint():
    """The loopback Messages API, answering with REPLIES in order."""
    with loopback_messages_api(lambda body, seen: REPLIES[min(len(seen), len(REPLIES)) - 1]) as (
        base_url,
        seen,
    ):
        yield base_url, seen


@pytest.mark.parametrize("chapter", [CHAPTERS[0], PRESENT[-1]])
def test_with_a_key_the_chapter_talks_to_the_api(chapter, endpoint, tmp_path):
    base_url, seen = endpoint
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
    assert done.stdout.splitlines()[-1] == "The command printed live."


def test_a_script_given_is_played_offline_even_with_a_key(tmp_path):
    """An instructor's recording replays offline for a class whose keys are set."""
    env = clean_env(
        ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL="http://127.0.0.1:9"
    )  # nothing listens there
    script = ROOT / "s01_loop" / "scenario.json"

    done = run_chapter(
        "s01_loop", "--workdir", str(tmp_path), "--script", str(script), "hi", env=env
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert (
        done.stdout.splitlines()[0]
        == f"s01_loop · offline (--script): the scripted model plays {script}"
    )
