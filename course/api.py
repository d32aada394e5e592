"""A Messages API on 127.0.0.1 that answers as it is told: the live tests' far end, and the
stage checker's (course/stages).

The tests share one server for their whole session (the `loopback_api` fixture in
tests/conftest.py). A test queues the answers, in order, with `api.answer(...)`; each request
takes the next one, and a request with none left gets a 418 the SDK does not retry, so that a
missing answer fails the test instead of hanging it. `api.seen` holds every request: its path,
headers and JSON body.

Lanes: `api.lane(name, answers)` gives runs side by side their own queue and record. A program
whose ANTHROPIC_BASE_URL is `api.url + "/" + name` sends to `/NAME/v1/messages`; those requests
take the lane's answers and are recorded in the lane's `seen` (and not in `api.seen`).

The answers take the shapes the API documents: a Message, an error body
({"type": "error", "error": {"type", "message"}}), with the headers it sends, and the
broken replies a gateway can send: an empty or cut-off body, or no answer at all.
"""

import contextlib
import http.server
import json
import threading

MODEL = "test-model"


def message(*content, stop_reason="end_turn", usage=None, **extra):
    """A Message as the API sends it."""
    body = {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": list(content),
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 3, "output_tokens": 2},
        **extra,
    }
    return Answer(200, json.dumps(body).encode())


def error(status, kind, text, headers=None, details=None):
    """An error status with the API's error body."""
    inner = {"type": kind, "message": text}
    if details is not None:
        inner["details"] = details
    body = {"type": "error", "error": inner, "request_id": "req_loopback"}
    return Answer(status, json.dumps(body).encode(), headers)


def raw(body, status=200, content_type="application/json"):
    """A reply with exactly this body (bytes), e.g. an empty or cut-off one."""
    return Answer(status, body, {"content-type": content_type})


class Answer:
    def __init__(self, status, body, headers=None):
        self.status, self.body = status, body
        self.headers = {"content-type": "application/json", **(headers or {})}


class Silence:
    """No answer at all, until the test session ends: a hung server."""


SILENCE = Silence()


class Lane:
    """The queue and the record of one lane: its own answers, its own requests."""

    def __init__(self, answers):
        self.answers, self.seen = list(answers), []


class MessagesAPI:
    def __init__(self):
        self.answers, self.seen, self.by_prompt, self.lanes = [], [], {}, {}
        self.released = threading.Event()  # set at the end: the silent requests give up
        self.lock = threading.Lock()
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            # HTTP/1.0: one request per connection, closed after its answer, so that no
            # connection is left open when a test ends (the SDK's clients are not closed)
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                try:
                    body = json.loads(body)
                except ValueError:
                    body = None  # recorded as None; answered like any other request
                request = {"path": self.path, "headers": dict(self.headers), "body": body}
                lane = api.lanes.get(self.path.split("/")[1])
                if lane is not None:
                    lane.seen.append(request)
                    answer = api.lane_answer(lane)
                else:
                    api.seen.append(request)
                    answer = api.next_answer(body)
                if isinstance(answer, Silence):
                    api.released.wait(60)
                    return
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # a client that gave up on a silent request: nothing to report

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def lane(self, name, answers):
        """A lane for one run: requests to `/NAME/...` take these answers in order."""
        self.lanes[name] = Lane(answers)
        return self.lanes[name]

    def lane_answer(self, lane):
        with self.lock:
            if lane.answers:
                return lane.answers.pop(0)
        return error(418, "test_error", "no answer is scripted for this request")

    def answer(self, *answers):
        self.answers.extend(answers)

    def answer_by_prompt(self, answers):
        """{prompt: [answers]}: each request takes the next answer for the first prompt of its
        conversation, so that runs side by side each get their own."""
        self.by_prompt = {prompt: list(queue) for prompt, queue in answers.items()}

    def next_answer(self, body):
        queue = self.answers
        if self.by_prompt and isinstance(body, dict):
            first = body["messages"][0]["content"]
            queue = self.by_prompt.get(first if isinstance(first, str) else first[0]["text"], [])
        if queue:
            return queue.pop(0)
        return error(418, "test_error", "the test gave no answer for this request")

    def bodies(self):
        return [request["body"] for request in self.seen]

    def reset(self):
        self.answers.clear()
        self.seen.clear()
        self.by_prompt = {}

    def close(self):
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


# ---- one answer function instead of a queue: the lessons' and the notebooks' live runs ---------


def message_json(content, stop_reason="end_turn", model=MODEL):
    """A Message as the API sends it, in JSON."""
    return {
        "id": "msg_live",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


@contextlib.contextmanager
def loopback_messages_api(answer):
    """A Messages API on 127.0.0.1, for tests of the live path (no test may reach the real one).

    answer(body, seen) gives the Message JSON for each request. Yields
    (base_url, seen), where seen holds {"path", "headers", "body"} of every request.
    """
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
            answered = json.dumps(answer(body, seen)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answered)))
            self.end_headers()
            self.wfile.write(answered)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", seen
    finally:
        server.shutdown()
        server.server_close()
