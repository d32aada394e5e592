"""Your own agent: s01's sketch, made runnable. Grow this one file, stage by stage.

Run it (live: it needs ANTHROPIC_API_KEY; it acts in the folder you run it from):
    python build/agent.py "What files are here?"
Check it (offline: the checker plays the model, no key needed):
    .venv/bin/python -m course.stages s01 build/agent.py
"""

import os
import subprocess
import sys

import anthropic

client = anthropic.Anthropic()  # reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
MODEL = os.environ.get("MODEL_ID", "claude-sonnet-5-5")
BASH = {"name": "bash", "description": "Run a shell command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}},
                         "required": ["command"]}}
messages = [{"role": "user", "content": sys.argv[1]}]

while True:
    response = client.messages.create(model=MODEL, max_tokens=8000,
                                      tools=[BASH], messages=messages)
    messages.append({"role": "assistant", "content": response.content})
    if response.stop_reason != "tool_use":
        break
    results = []
    for block in response.content:
        if block.type == "tool_use":
            run = subprocess.run(block.input["command"], shell=True,
                                 capture_output=True, text=True)
            results.append({"type": "tool_result", "tool_use_id": block.id,
                            "content": f"{run.stdout}{run.stderr}[exit code {run.returncode}]"})
    messages.append({"role": "user", "content": results})
print("".join(block.text for block in response.content if block.type == "text"))
