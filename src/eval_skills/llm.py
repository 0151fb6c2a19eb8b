"""Hosted and local model APIs: the clients of the official ``openai`` and ``anthropic`` SDKs (imported only
when used), the key lookup, and the quick check that an endpoint answers before anything runs.

Shared by the ``openai`` agent and the ``openai`` and ``anthropic`` judges. The SDKs retry 429 and 5xx
replies with exponential backoff (honouring ``retry-after``) and apply the timeouts given here. What an endpoint
sends back is untrusted: a proxy may quote the key it was sent in an error message, so the key (with every other
known secret, see :mod:`eval_skills.masking`) is masked in every text that is kept (errors, replies) before it is
cut and before it can reach a report, a log or the store.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .errors import InputError
from .masking import cut, secret_values

__all__ = ["CHECK_TIMEOUT", "ERROR_TEXT_LIMIT", "check_endpoint", "describe_api_error", "find_key", "make_client"]

CHECK_TIMEOUT = 5.0  # seconds the reachability check waits
NO_KEY = "no-key"  # sent to servers that need none (the SDKs refuse an empty key)
ERROR_TEXT_LIMIT = 300  # characters of an SDK's error text quoted in a run's or a judgement's error


def find_key(variables: tuple[str, ...], env: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """The first of ``variables`` set (non-empty) in ``env`` (default: the environment): (value, its name)."""
    env = os.environ if env is None else env
    for name in variables:
        if env.get(name):
            return env[name], name
    return None, None


def describe_api_error(exc: BaseException, who: str, secrets: tuple[str, ...] = ()) -> str:
    """One line saying why a request to ``who`` ("the judge", "the endpoint") failed: its HTTP status, that it
    could not be reached, or that its reply could not be read; the SDK's text with ``secrets`` masked, then cut
    at ERROR_TEXT_LIMIT characters."""
    status = getattr(exc, "status_code", None)
    text = cut(" ".join(str(exc).split()), ERROR_TEXT_LIMIT, secrets)
    if status is not None:
        return f"{who} answered {status}: {text}"
    if type(exc).__name__ in ("APIConnectionError", "APITimeoutError"):
        return f"cannot reach {who}: {type(exc).__name__}: {text}"
    return f"{who}'s reply could not be read: {type(exc).__name__}: {text}"


def make_client(provider: str, *, key: str | None, base_url: str | None, timeout: float, max_retries: int,
                sync: bool = False) -> Any:
    """An ``openai`` or ``anthropic`` SDK client (async unless ``sync``)."""
    if provider == "anthropic":
        import anthropic

        cls: Any = anthropic.Anthropic if sync else anthropic.AsyncAnthropic
    else:
        import openai

        cls = openai.OpenAI if sync else openai.AsyncOpenAI
    return cls(api_key=key or NO_KEY, base_url=base_url or None, timeout=timeout, max_retries=max_retries)


def check_endpoint(provider: str, *, key: str | None, base_url: str | None, what: str, field: str,
                   key_name: str | None, model: str | None = None, timeout: float = CHECK_TIMEOUT) -> None:
    """InputError unless the endpoint answers a quick request (listing its models) without refusing the key.

    A server that answers with another error (a 5xx) is reachable. A 404 for the model list is a server without
    one, or a wrong base URL: with ``model`` given, the route the run uses is asked once for one token (never
    paid for with the providers' own APIs, which list their models), and a 404 there too stops the run."""
    where = base_url or ("the Anthropic API" if provider == "anthropic" else "the OpenAI API")
    client = make_client(provider, key=key, base_url=base_url, timeout=timeout, max_retries=0, sync=True)
    sdk: Any
    if provider == "anthropic":
        import anthropic as sdk
    else:
        import openai as sdk
    try:
        try:
            if provider == "anthropic":
                client.models.list(limit=1)
            else:
                client.models.list()
        except sdk.NotFoundError:
            if model:
                _ask_one_token(client, provider, model)
    except (sdk.AuthenticationError, sdk.PermissionDeniedError) as exc:
        source = f"the key in {key_name}" if key_name else "the request without a key"
        raise InputError(f"{what}: {where} refused {source} ({exc.status_code})", field=field,
                         hint="check the key") from None
    except sdk.NotFoundError as exc:  # the run's own route, after the model list: nothing there either
        said = cut(" ".join(str(getattr(exc, "message", exc)).split()), 200, secret_values(os.environ, (key,)))
        raise InputError(f"{what}: {where} answers 404 to its model list and to a request for model {model!r} "
                         f"({said})", field=field,
                         hint="check the base URL (an OpenAI-compatible server's usually ends in /v1) and the "
                              "model") from None
    except sdk.APIConnectionError as exc:  # includes timeouts
        cause = exc.__cause__ or exc
        raise InputError(f"{what}: cannot reach {where} ({type(cause).__name__}: {cause})", field=field,
                         hint="check the URL and that the server is running") from None
    except sdk.APIStatusError:
        pass  # it answered
    finally:
        client.close()


def _ask_one_token(client: Any, provider: str, model: str) -> None:
    message = [{"role": "user", "content": "Reply with OK."}]
    if provider == "anthropic":
        client.messages.create(model=model, max_tokens=1, messages=message)
    else:
        client.chat.completions.create(model=model, max_tokens=1, messages=message)
