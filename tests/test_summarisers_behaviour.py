"""The summariser and normaliser contracts: what the chat summariser sends (numbered texts within
max_input_chars, the instruction as the system message, the key as a bearer token only), what it
refuses to accept back, and how a normaliser's JSON answer is read or refused."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness_memory import InvalidInputError
from harness_memory.summarisers import (
    Normalised,
    OpenAICompatibleSummariser,
    SummariserError,
    SummariserNormaliser,
)


class _Server:
    """A loopback chat-completions server answering ``payload`` (bytes) with ``status``."""

    def __init__(self, payload: bytes, status: int = 200):
        seen = self.requests = []

        class H(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                seen.append(
                    {
                        "path": self.path,
                        "auth": self.headers.get("Authorization"),
                        "type": self.headers.get("Content-Type"),
                        "body": body,
                    }
                )
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *a):
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _answer(content) -> bytes:
    return json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}).encode()


def test_the_request_numbers_the_texts_and_sends_the_instruction_and_key():
    with _Server(_answer("Caroline joined a support group.")) as srv:
        s = OpenAICompatibleSummariser("m1", base_url=srv.url + "/", api_key="sk-test-key", temperature=0.3)
        assert s.summarise(["first", "second"], instruction="Summarise.") == "Caroline joined a support group."
    req = srv.requests[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer sk-test-key"
    assert req["type"] == "application/json"
    body = req["body"]
    assert body["model"] == "m1" and body["temperature"] == 0.3
    assert body["messages"] == [
        {"role": "system", "content": "Summarise."},
        {"role": "user", "content": "[1] first\n[2] second"},
    ]
    assert "sk-test-key" not in repr(s)


def test_without_a_key_no_authorization_is_sent():
    with _Server(_answer("ok then")) as srv:
        OpenAICompatibleSummariser("m1", base_url=srv.url).summarise(["x"], instruction="i")
    assert srv.requests[0]["auth"] is None


def test_texts_are_sent_while_they_fit_max_input_chars():
    with _Server(_answer("fine")) as srv:
        # "[1] " + 16 characters is exactly 20: it fits; the next text no longer does
        OpenAICompatibleSummariser("m", base_url=srv.url, max_input_chars=20).summarise(
            ["a" * 16, "b"], instruction="i"
        )
        OpenAICompatibleSummariser("m", base_url=srv.url, max_input_chars=19).summarise(["a" * 16], instruction="i")
        OpenAICompatibleSummariser("m", base_url=srv.url, max_input_chars=27).summarise(
            ["a" * 16, "bb"], instruction="i"
        )
    sent = [r["body"]["messages"][1]["content"] for r in srv.requests]
    assert sent == ["[1] " + "a" * 16, "", "[1] " + "a" * 16 + "\n[2] bb"]


@pytest.mark.parametrize(
    ("payload", "status", "message"),
    [
        (_answer("fine"), 500, "HTTP 500"),
        (b"not json", 200, "not JSON"),
        (json.dumps({"choices": []}).encode(), 200, "unexpected chat response"),
        (_answer("   "), 200, "empty message"),
        (_answer(None), 200, "empty message"),
    ],
)
def test_a_bad_answer_is_a_summariser_error(payload, status, message):
    with _Server(payload, status) as srv:
        s = OpenAICompatibleSummariser("m", base_url=srv.url, api_key="sk-secret-value")
        with pytest.raises(SummariserError, match=message) as err:
            s.summarise(["x"], instruction="i")
    assert "sk-secret-value" not in str(err.value)


def test_an_unreachable_server_is_a_summariser_error():
    with _Server(b"") as srv:
        url = srv.url
    with pytest.raises(SummariserError, match="failed"):
        OpenAICompatibleSummariser("m", base_url=url, timeout=2).summarise(["x"], instruction="i")


@pytest.mark.parametrize(("model", "url"), [("", "http://x"), ("  ", "http://x"), (3, "http://x"), ("m", "ftp://x")])
def test_a_summariser_needs_a_model_and_an_http_url(model, url):
    with pytest.raises(InvalidInputError):
        OpenAICompatibleSummariser(model, base_url=url)


class _Canned:
    def __init__(self, answer):
        self.answer, self.asked = answer, []

    def summarise(self, texts, *, instruction):
        self.asked.append((list(texts), instruction))
        return self.answer


def test_a_normaliser_reads_the_json_inside_the_answer_and_names_the_types():
    canned = _Canned('Sure! {"content": "Pin the proxy.", "type": "decision", "tags": ["ci"]} Done.')
    got = SummariserNormaliser(canned).normalise("pin it pls", types=["decision", "success"])
    assert got == Normalised(content="Pin the proxy.", type="decision", tags=["ci"])
    texts, instruction = canned.asked[0]
    assert texts == ["pin it pls"] and "one of decision, success" in instruction


@pytest.mark.parametrize(
    "answer",
    [
        "no json here",
        '{"content": "", "type": "decision"}',
        '{"content": "x", "type": "unknown"}',
        '{"content": "x", "type": "decision", "tags": ' + json.dumps([f"t{k}" for k in range(33)]) + "}",
    ],
)
def test_a_normalisers_unusable_answer_is_a_summariser_error(answer):
    with pytest.raises(SummariserError):
        SummariserNormaliser(_Canned(answer)).normalise("x", types=["decision"])


def test_a_normaliser_needs_a_summariser():
    with pytest.raises(InvalidInputError):
        SummariserNormaliser(object())


def test_a_normalised_note_of_one_character_and_a_type_of_one_to_forty_are_accepted():
    got = SummariserNormaliser(_Canned('{"content": "x", "type": "a"}')).normalise("t", types=["a"])
    assert got == Normalised(content="x", type="a", tags=[])
    forty = "t" * 40
    assert (
        SummariserNormaliser(_Canned(json.dumps({"content": "x", "type": forty}))).normalise("t", types=[forty]).type
        == forty
    )
    with pytest.raises(SummariserError):
        SummariserNormaliser(_Canned(json.dumps({"content": "x", "type": forty + "t"}))).normalise(
            "t", types=[forty + "t"]
        )
    tags = [f"t{k}" for k in range(32)]
    assert (
        SummariserNormaliser(_Canned(json.dumps({"content": "x", "type": "a", "tags": tags})))
        .normalise("t", types=["a"])
        .tags
        == tags
    )


def test_without_a_base_url_the_summariser_talks_to_openai():
    s = OpenAICompatibleSummariser("gpt-x")
    assert s.base_url == "https://api.openai.com/v1" and s.model == "gpt-x"
    assert repr(s) == "OpenAICompatibleSummariser(model='gpt-x', base_url='https://api.openai.com/v1')"


def test_the_refusals_say_what_is_needed():
    with pytest.raises(InvalidInputError, match="^model must be a non-empty string$"):
        OpenAICompatibleSummariser(" ")
    with pytest.raises(InvalidInputError, match="^base_url must be an http[(]s[)] URL$"):
        OpenAICompatibleSummariser("m", base_url="file:///etc")
