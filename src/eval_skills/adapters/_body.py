"""A reply body decoded under a size cap that holds on the decoded bytes as they are produced.

httpx decodes each received chunk whole before the caller sees it, so a gzip bomb (64 KiB on the wire, 64 MiB
once inflated) is in memory before any size check. Here each stage inflates at most what the cap still allows:
a body that would grow past it stops growing at the cap plus one byte.
"""

from __future__ import annotations

import zlib

__all__ = ["ACCEPT_ENCODING", "BodyTooLarge", "BoundedBody", "UnsupportedEncoding"]

ACCEPT_ENCODING = "gzip, deflate"  # what we can inflate under a cap (and so all we ask for)


class BodyTooLarge(Exception):
    """The decoded body would pass the cap."""


class UnsupportedEncoding(Exception):
    """A ``Content-Encoding`` we did not ask for and cannot decode under a cap (its name is the message)."""


class _Inflate:
    """One gzip or deflate stage (a deflate body may be zlib-wrapped or raw, as httpx accepts)."""

    def __init__(self, encoding: str) -> None:
        self.raw_fallback = encoding == "deflate"
        self.obj = zlib.decompressobj(zlib.MAX_WBITS | 16 if encoding != "deflate" else zlib.MAX_WBITS)

    def feed(self, data: bytes, limit: int) -> bytes:
        try:
            out = self.obj.decompress(data, limit + 1)
        except zlib.error:
            if not self.raw_fallback:
                raise
            self.raw_fallback = False
            self.obj = zlib.decompressobj(-zlib.MAX_WBITS)
            out = self.obj.decompress(data, limit + 1)
        self.raw_fallback = False
        if len(out) > limit or self.obj.unconsumed_tail:
            raise BodyTooLarge
        return out

    def flush(self, limit: int) -> bytes:
        out = self.obj.flush()
        if len(out) > limit:
            raise BodyTooLarge
        return out


class BoundedBody:
    """Feed the raw chunks of a body with ``Content-Encoding`` ``content_encoding``; ``feed`` raises
    BodyTooLarge as soon as a decoded stage passes ``max_bytes``, ``finish`` returns the decoded body.
    An encoding other than identity, gzip (x-gzip) and deflate is UnsupportedEncoding; zlib.error is a
    corrupt body."""

    def __init__(self, content_encoding: str, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        names = [n.strip().lower() for n in content_encoding.split(",") if n.strip()]
        self.stages: list[_Inflate] = []
        for name in reversed(names):  # the last encoding applied is the first undone
            if name == "identity":
                continue
            if name not in ("gzip", "x-gzip", "deflate"):
                raise UnsupportedEncoding(name)
            self.stages.append(_Inflate(name))
        self.sizes = [0] * (len(self.stages) + 1)
        self.parts: list[bytes] = []

    def feed(self, chunk: bytes) -> None:
        self._push(0, chunk, final=False)

    def finish(self) -> bytes:
        self._push(0, b"", final=True)
        return b"".join(self.parts)

    def _push(self, stage: int, data: bytes, *, final: bool) -> None:
        limit = self.max_bytes - self.sizes[stage]
        if stage == len(self.stages):
            if len(data) > limit:
                raise BodyTooLarge
            self.sizes[stage] += len(data)
            if data:
                self.parts.append(data)
            return
        inflate = self.stages[stage]
        out = inflate.feed(data, limit) if data else b""
        if final:
            out += inflate.flush(limit - len(out))
        self.sizes[stage] += len(out)
        self._push(stage + 1, out, final=final)
