"""The openai and anthropic judges against fake model APIs on 127.0.0.1: what they send (prompts, structured
output, settings, keys), how they read the replies, retries, fallbacks, and the checks before a run."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropic, message
from fakes.anthropic_server import error as anthropic_error
from fakes.openai_server import FakeOpenAI, Reply, completion, error

from eval_skills.errors import InputError
from eval_skills.formats.workspace import SkillEvent, ToolCallEvent
from eval_skills.judges import ArmOutput, CompareRequest, GradeRequest, ScoreRequest, create_judge

GRADE = GradeRequest(prompt="Summarise the invoice", expected_output="the total", response="The total is 42 EUR.",
                     outputs={"out/summary.md": "Total: 42 EUR"},
                     transcript=[ToolCallEvent(id="c1", name="Read", input={"path": "invoice.txt"}, result="42"),
                                 SkillEvent(skill="invoices", tool_call_id="c1")],
                     assertions=["It states the total", "It names the currency"])
GRADED = {"expectations": [{"text": "x", "passed": True, "evidence": "says 42"},
                           {"text": "y", "passed": False, "evidence": "no currency name"}]}
COMPARE = CompareRequest(prompt="Write a haiku", A=ArmOutput(response="five seven five"),
                         B=ArmOutput(response="a limerick", outputs={"poem.md": "There once was"}))
SCORE = ScoreRequest(rubric="Mentions Paris", input={"q": "capital of France"}, output={"answer": "Paris"},
                     expected="Paris")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVAL_SKILLS_LLM_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def ask(judge, request):
    return asyncio.run(judge.judge(request))


def openai_judge(api: FakeOpenAI, **options):
    return create_judge("openai", model="judge-model", base_url=api.url, **options)


def test_openai_grade_with_structured_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    with FakeOpenAI(key="sk-openai") as api:
        api.script(error(429), completion(json.dumps(GRADED)))
        judge = openai_judge(api)
        judge.check()
        judgement = ask(judge, GRADE)
    assert judgement.ok and (judgement.backend, judgement.model) == ("openai", "judge-model")
    assert (judgement.prompt_version, judgement.attempts) == ("grade-1", 1)
    assert [(e.text, e.passed, e.evidence) for e in judgement.expectations(GRADE.assertions)] == [
        ("It states the total", True, "says 42"), ("It names the currency", False, "no currency name")]
    body = api.chat_requests()[-1]
    assert len(api.chat_requests()) == 2  # the 429 was retried
    assert body["model"] == "judge-model" and "temperature" not in body
    assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["strict"]
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["expectations"]["items"]["required"] == ["text", "passed", "evidence"]
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert system.startswith("You grade the work of an AI agent")
    for fragment in ("<task>\nSummarise the invoice\n</task>", "<response>\nThe total is 42 EUR.\n</response>",
                     '<file path="out/summary.md">\nTotal: 42 EUR\n</file>',
                     '[tool Read] { "path": "invoice.txt" } -> 42', "[skill invoices used",
                     '<assertion number="2">It names the currency</assertion>'):
        assert fragment in user


def test_openai_falls_back_when_structured_output_is_refused() -> None:
    with FakeOpenAI() as api:
        api.script(error(400, "response_format json_schema is not supported"),
                   completion('{"winner": "b", "reasoning": "B rhymes"}'),
                   completion('{"winner": "TIE", "reasoning": "same"}'))
        judge = openai_judge(api, temperature=0)
        first, second = ask(judge, COMPARE), ask(judge, COMPARE)
    assert (first.verdict.winner, second.verdict.winner) == ("B", "TIE")
    formats = [body.get("response_format", {}).get("type") for body in api.chat_requests()]
    assert formats == ["json_schema", "json_object", "json_object"]  # the judge keeps to the way that worked
    assert all(body["temperature"] == 0 for body in api.chat_requests())


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_a_request_refused_every_way_leaves_structured_output_on(backend: str) -> None:
    """A 400 about the request itself (too long for the model) is refused whatever way the JSON is asked for: it
    is that request's judge error, and the next requests still ask for structured output."""
    too_long = {"openai": error, "anthropic": anthropic_error}[backend](400, "prompt is too long: 210000 tokens")
    server = FakeOpenAI() if backend == "openai" else FakeAnthropic()
    verdict = json.dumps({"score": 0.5, "reason": "ok"})

    def answer(request):
        if "HUGE" in json.dumps(request.body):
            return too_long
        return completion(verdict) if backend == "openai" else message(tool_input=json.loads(verdict))

    with server as api:
        api.handler = answer
        base = api.url if backend == "openai" else api.base
        judge = create_judge(backend, model="judge-model", base_url=base, max_retries=0)
        failed = ask(judge, ScoreRequest(rubric="r", output="HUGE"))
        fine = ask(judge, SCORE)
        bodies = [r.body for r in api.posts()]
    assert failed.error.startswith("the judge answered 400") and fine.ok and fine.verdict.score == 0.5
    ways = [b.get("response_format", {}).get("type") if backend == "openai" else
            "output_config" if "output_config" in b else "tool" if "tools" in b else None for b in bodies]
    best = "json_schema" if backend == "openai" else "output_config"
    assert ways[-1] == best and ways.count(best) == 3  # each attempt tried every way; then the best way again


def test_a_reply_that_does_not_fit_is_asked_once_more_then_a_judge_error() -> None:
    with FakeOpenAI() as api:
        api.script(completion("I think it is good."), completion('{"score": 0.75, "reason": "mostly"}'))
        judgement = ask(openai_judge(api), SCORE)
        assert judgement.ok and judgement.verdict.score == 0.75 and judgement.attempts == 2
        second_user = api.chat_requests()[1]["messages"][1]["content"]
        assert "Your previous reply could not be used: the reply is not a JSON object" in second_user
        assert '<output>\n{\n  "answer": "Paris"\n}\n</output>' in second_user

        api.script(completion('{"expectations": []}'), completion("still prose"))
        failed = ask(openai_judge(api), GRADE)
    assert not failed.ok and failed.attempts == 2 and failed.error.startswith("the reply is not a JSON object")
    assert [e.passed for e in failed.expectations(GRADE.assertions)] == [None, None]
    assert failed.expectations(GRADE.assertions)[0].evidence.startswith("judge error: ")


@pytest.mark.parametrize(("replies", "error_start"), [
    ([error(500, "boom")] * 2, "the judge answered 500"),
    ([Reply(200, raw=b"<html>gateway</html>")] * 2, "the judge's reply could not be read: JSONDecodeError"),
    ([Reply(200, {"choices": []})] * 2, "the judge's reply has no message"),
])
def test_endpoint_failures_are_judge_errors(replies: list[Reply], error_start: str) -> None:
    with FakeOpenAI() as api:
        api.script(*replies)
        judgement = ask(openai_judge(api, max_retries=0), SCORE)
    assert not judgement.ok and judgement.error.startswith(error_start), judgement.error


def test_a_slow_judge_times_out() -> None:
    with FakeOpenAI() as api:
        api.handler = lambda request: Reply(200, completion('{"score": 1}').body, delay=2)
        judgement = ask(openai_judge(api, timeout=0.3, max_retries=0), SCORE)
    assert not judgement.ok and "APITimeoutError" in judgement.error and judgement.attempts == 2


def test_anthropic_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-usual")
    monkeypatch.setenv("EVAL_SKILLS_LLM_KEY", "sk-ant-ours")  # wins over the backend's usual variable
    with FakeAnthropic(key="sk-ant-ours") as api:
        api.script(anthropic_error(529), message(text=json.dumps(GRADED)),
                   anthropic_error(400, "output_config: unknown field"),
                   message(tool_input={"score": 0.5, "reason": "half"}),
                   message(tool_input={"score": 1, "reason": "ok"}))
        judge = create_judge("anthropic", model="claude-judge", base_url=api.base, temperature=0.2)
        judge.check()
        graded = ask(judge, GRADE)
        scored, again = ask(judge, SCORE), ask(judge, SCORE)
    assert graded.ok and [e.passed for e in graded.expectations(GRADE.assertions)] == [True, False]
    assert (scored.verdict.score, again.verdict.score) == (0.5, 1.0) and scored.prompt_version == "score-2"
    bodies = api.message_requests()
    assert len(bodies) == 5
    first = bodies[0]
    assert first["model"] == "claude-judge" and first["max_tokens"] == 4096 and first["temperature"] == 0.2
    assert first["system"].startswith("You grade") and first["messages"][0]["role"] == "user"
    assert first["output_config"]["format"]["schema"]["required"] == ["expectations"]
    assert "output_config" not in bodies[3] and bodies[3]["tool_choice"] == {"type": "tool", "name": "record_verdict"}
    assert "output_config" not in bodies[4] and "tools" in bodies[4]  # kept to the tool from then on
    sent = {r.headers.get("x-api-key") or r.headers.get("authorization", "").removeprefix("Bearer ")
            for r in api.requests}
    assert sent == {"sk-ant-ours"}  # (SDK versions send it as x-api-key or as a bearer token)


def test_anthropic_reply_without_text_is_asked_again() -> None:
    with FakeAnthropic() as api:
        api.script(message(stop_reason="max_tokens"), message(text='{"winner": "A", "reasoning": "haiku"}'))
        judgement = ask(create_judge("anthropic", model="m", base_url=api.base), COMPARE)
    assert judgement.ok and judgement.verdict.winner == "A" and judgement.attempts == 2
    assert "Your previous reply could not be used: the judge's reply has no text (stop reason: max_tokens)" in (
        api.message_requests()[1]["messages"][0]["content"])


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_a_wrong_base_url_stops_before_a_run(backend: str) -> None:
    """A server answering 404 to the model list is asked once on the judge's own route: a 404 there too is a wrong
    base URL (a path missing its /v1), one token answered is a server without a model list."""
    not_found = Reply(404, {"error": {"message": "Not Found", "type": "not_found"}})
    server = FakeOpenAI() if backend == "openai" else FakeAnthropic()
    with server as api:
        api.get_handler = lambda request: not_found
        api.handler = lambda request: not_found
        base = api.base  # without /v1 for openai: the mistake
        with pytest.raises(InputError, match="answers 404 to its model list and to a request for model 'm'.*"
                                             "check the base URL"):
            create_judge(backend, model="m", base_url=base).check()
        assert [r.method for r in api.requests] == ["GET", "POST"]
        assert api.posts()[0].body["max_tokens"] == 1
        api.handler = lambda request: (completion("OK") if backend == "openai" else message(text="OK"))
        create_judge(backend, model="m", base_url=base).check()  # no model list, but it answers


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_checks_before_a_run(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    variable = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}[backend]
    with pytest.raises(InputError, match=f"the {backend} judge needs a model"):
        create_judge(backend).check()
    with pytest.raises(InputError, match=f"needs a key: set EVAL_SKILLS_LLM_KEY or {variable}"):
        create_judge(backend, model="m").check()
    port = closed_port()
    with pytest.raises(InputError, match=f"cannot reach http://127.0.0.1:{port}"):
        create_judge(backend, model="m", base_url=f"http://127.0.0.1:{port}").check()
    monkeypatch.setenv(variable, "sk-wrong")
    server = FakeOpenAI(key="sk-right") if backend == "openai" else FakeAnthropic(key="sk-right")
    with server:
        url = server.base + ("/v1" if backend == "openai" else "")
        with pytest.raises(InputError, match=f"refused the key in {variable} \\(401\\)"):
            create_judge(backend, model="m", base_url=url).check()
    with pytest.raises(InputError, match="temperature"):
        create_judge(backend, model="m", temperature=5)


def test_cache_key_covers_model_prompt_version_and_settings(tmp_path: Path) -> None:
    base = create_judge("openai", model="m1")
    assert base.cache_key(GRADE) == create_judge("openai", model="m1").cache_key(GRADE)
    others = [create_judge("openai", model="m2"), create_judge("openai", model="m1", temperature=0.5),
              create_judge("anthropic", model="m1"), create_judge("openai", model="m1", base_url="http://x/v1")]
    keys = {j.cache_key(GRADE) for j in [base, *others]}
    assert len(keys) == 5
    assert base.cache_key(GRADE) != base.cache_key(GRADE.model_copy(update={"response": "other"}))
