"""Stage s05: todo_write, and the reminder.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges."""

import json

from course.stages import Fail, cut
from course.stages.common import check
from course.stages.s04 import REMINDED, TODOS


@check(TODOS, "todo_write takes a valid list, without asking")
def valid_list(run):
    properties = {}
    for tool in run.request(1).get("tools") or []:
        if tool.get("name") == "todo_write":
            properties = tool.get("input_schema", {}).get("properties", {})
    if "todos" not in properties:
        raise Fail(f"Request 1 offers the tools {run.tools(1)}; it should offer todo_write, "
                   "whose input_schema has the property `todos`.")
    run.ok(1, "t1")
    run.ok(6, "t6")


@check(TODOS, "an invalid list (two in_progress, a bad status, an empty "
       "content, an unknown field) is an is_error result")
def invalid_list(run):
    run.refused(3, "t3", "two items are in_progress")
    run.refused(4, "t4", "'started' is not a status")
    run.refused(5, "t5", "the content is empty")
    run.refused(5, "t5b", "'priority' is not a field of a todo")


def reminders(run, reply):
    """Where in the user turn after `reply` a text block mentions todos: 'after', 'before'."""
    turn = run.turn_after(reply)
    kinds = [block.get("type") for block in turn]
    places = []
    for place, block in enumerate(turn):
        if block.get("type") == "text" and "todo" in block.get("text", "").lower():
            places.append("after" if "tool_result" not in kinds[place:] else "before")
    return places


@check(TODOS, "the reminder is a text block after the tool "
       "results, in their user turn", follows=["valid_list"])
def reminder_after_results(run):
    places = reminders(run, REMINDED)
    if places != ["after"]:
        raise Fail(f"The user turn of request {REMINDED + 1} holds {places.count('after')} "
                   f"text block(s) about todos after the tool results and "
                   f"{places.count('before')} before them; it should end with one reminder, "
                   f"after the results. That turn: {cut(json.dumps(run.turn_after(REMINDED)))}")


@check(TODOS, "the reminder comes after three tool rounds without a "
       "successful todo_write; only a success resets the count", follows=["valid_list"])
def reminder_count(run):
    early = [reply for reply in range(1, 8) if reply != REMINDED and reminders(run, reply)]
    if early:
        raise Fail(f"A reminder came in the user turn of request {early[0] + 1}; it is due "
                   f"only in request {REMINDED + 1}: rounds 2 to 4 had no successful "
                   "todo_write (the failed ones do not count), round 1 and 6 had one.")
    if not reminders(run, REMINDED):
        raise Fail(f"No reminder came in request {REMINDED + 1}; rounds 2, 3 and 4 had no "
                   "successful todo_write (a failed one does not reset the count).")
