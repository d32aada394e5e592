"""What every stage's checks are written with: the registry, the decorator, the blocks of a
scripted reply, and the history as the API reads it.

A stage's checks live in its own module (course/stages/s01.py, ...): each exchange, then the
checks that judge it, each a function named by what it checks (the name is the check's:
`s02.edit_file` is the function `edit_file` of course/stages/s02.py). course/stages/checks.py
imports the modules in the order of the stages; a new stage adds its module there.
"""

from course.stages import Check, blocks

CHECKS = []  # every check, in the order of the stages, then of their modules


def check(exchange, title, follows=()):
    """Register the function below as a check of its module's stage (the module's name, s03),
    named after the function: `follows` names checks of the same exchange whose failure may
    cause this one's (a name of this stage, or sNN.name of another)."""
    def register(judge):
        stage = judge.__module__.rsplit(".", 1)[-1]
        CHECKS.append(Check(stage, f"{stage}.{judge.__name__}", exchange, title, judge,
                            tuple(n if "." in n else f"{stage}.{n}" for n in follows)))
        return judge
    return register


def text(words):
    return {"type": "text", "text": words}


def use(key, name, **tool_input):
    return {"type": "tool_use", "id": f"<<id_{key}>>", "name": name, "input": tool_input}


def todo(content, status, **more):
    return {"content": content, "status": status, **more}


YES = "y\n" * 10
NOTES = {"<<notes>>.md": "<<alpha>>\n<<beta>>\n"}


def plain(messages):
    return [{"role": message.get("role"), "content": plain_blocks(message.get("content"))}
            for message in messages]


def plain_blocks(content):
    """The blocks as the API reads them: only the fields that matter, None fields dropped."""
    keep = {"text": ("text",), "tool_use": ("id", "name", "input"),
            "tool_result": ("tool_use_id", "content", "is_error")}
    return [{"type": block.get("type"),
             **{key: block[key] for key in keep.get(block.get("type"), ())
                if block.get(key) not in (None, False)}}
            for block in blocks(content)]
